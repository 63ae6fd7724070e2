// Test bot "osc": shuttles one piece back and forth and never captures. Two osc bots always
// draw (20 moves without a capture, equal material), whatever the seed.
module.exports = function onTurn(me, opponent, game) {
  const [a, b] = me.side === 'black' ? [[0, 2], [1, 2]] : [[3, 1], [2, 1]];
  const find = (f, t) => game.legalMoves.find((m) =>
    m.from[0] === f[0] && m.from[1] === f[1] && m.to[0] === t[0] && m.to[1] === t[1]);
  return find(a, b) || find(b, a) || game.legalMoves[0];
};
