// Stress benchmark (issue 21), 钳王 quick kind: a random legal move, no thinking points.
module.exports = function onTurn(me, opponent, game) {
  const moves = game.legalMoves;
  return moves[Math.floor(game.random() * moves.length)];
};
