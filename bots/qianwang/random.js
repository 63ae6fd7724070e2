// Training bot 1 (weakest): a uniformly random legal move, drawn with the seeded game.random.
module.exports = function onTurn(me, opponent, game) {
  const moves = game.legalMoves;
  return moves[Math.floor(game.random() * moves.length)];
};
