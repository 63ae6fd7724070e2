// Test bot "quit": shuttles like osc, but throws as soon as the history shows that its opponent
// shuttles like osc too (its first three moves all between the osc points of its side). So quit
// always loses to osc (by error), whatever the seed, and plays like osc against anyone else.
const SHUTTLE = { black: [[0, 2], [1, 2]], red: [[3, 1], [2, 1]] };
const at = (p, q) => Array.isArray(p) && p[0] === q[0] && p[1] === q[1];
module.exports = function onTurn(me, opponent, game) {
  const [a, b] = SHUTTLE[me.side];
  const [oa, ob] = SHUTTLE[opponent.side];
  const theirs = game.history.filter((h) => h.side === opponent.side);
  const shuttle = (h) => !h.pass && ((at(h.from, oa) && at(h.to, ob)) || (at(h.from, ob) && at(h.to, oa)));
  if (theirs.length >= 3 && theirs.slice(0, 3).every(shuttle)) {
    throw new Error('quit: the opponent is osc');
  }
  const find = (f, to) => game.legalMoves.find((m) => at(m.from, f) && at(m.to, to));
  return find(a, b) || find(b, a) || game.legalMoves[0];
};
