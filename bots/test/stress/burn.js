// Stress benchmark (issue 21), 钳王 CPU-hungry kind: a fixed busy loop per move (tens of
// milliseconds in QuickJS, far under the 2000 ms move limit), then a random legal move.
module.exports = function onTurn(me, opponent, game) {
  let x = 0;
  for (let i = 0; i < 400000; i++) x = (x + i * 7) % 1000003;
  const moves = game.legalMoves;
  return moves[Math.floor(((game.random() * 1000 + x) % 1000) / 1000 * moves.length)];
};
