// Test bot "spinner": plays one move, then loops forever (the per-move clock must stop it).
module.exports = function onTurn(me, opponent, game) {
  if (game.turnNumber >= 3) { for (;;) {} }
  return game.legalMoves[0];
};
