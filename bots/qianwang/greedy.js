// Training bot 2: one ply of greed plus one ply of caution, all through Rules.apply.
// Each legal move is tried once (captures score +10 each, a win is best of all); then, while
// thinking points last, the best-looking moves are checked for the opponent's strongest capture
// reply (-10 per piece it can take back). Ties are broken with game.random.
module.exports = function onTurn(me, opponent, game) {
  const side = me.side;
  const opp = opponent.side;
  const ncm = game.noCaptureMoves;
  const cands = game.legalMoves.map(function (m) {
    const r = Rules.apply(game.board, side, m);
    const after = r.captured.length ? 0 : ncm + 1;
    const verdict = Rules.judge(r.board, after);
    let score = 10 * r.captured.length + game.random();
    if (verdict && verdict.winner === side) score += 1000;
    if (verdict && verdict.winner === opp) score -= 1000;
    return { move: m, board: r.board, ncm: after, score: score, over: !!verdict };
  });
  cands.sort(function (a, b) { return b.score - a.score; });
  for (const c of cands) {
    if (c.over) continue;
    const replies = Rules.legalMoves(c.board, opp);
    if (replies.length > Rules.remaining()) break;
    let worst = 0;
    for (const rep of replies) {
      const r = Rules.apply(c.board, opp, rep);
      let loss = 10 * r.captured.length;
      const v = Rules.judge(r.board, r.captured.length ? 0 : c.ncm + 1);
      if (v && v.winner === opp) loss += 1000;
      if (loss > worst) worst = loss;
    }
    c.score -= worst;
    c.checked = true;
  }
  for (const c of cands) if (!c.over && !c.checked) c.score -= 5; // unknown risk
  cands.sort(function (a, b) { return b.score - a.score; });
  return cands[0].move;
};
