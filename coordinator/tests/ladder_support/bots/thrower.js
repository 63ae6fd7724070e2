// Test bot "thrower": plays the first legal move, then throws on its third move.
module.exports = function onTurn(me, opponent, game) {
  if (game.turnNumber >= 5) throw new Error('thrower gives up on turn ' + game.turnNumber);
  return game.legalMoves[0];
};
