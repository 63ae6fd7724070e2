// Training bot 3 (strongest): iterative-deepening alpha-beta (negamax) over Rules.apply, within
// the 100 thinking points of a move. Every position reached is cached per move, so a deeper
// iteration re-uses the points the shallower one spent; when Rules.remaining() hits 0 the search
// stops and the best move of the deepest usable iteration is played. Evaluation: material, then
// mobility; endings come from Rules.judge (elimination, 20 moves without capture, ...).
const WIN = 100000;

module.exports = function onTurn(me, opponent, game) {
  const root = game.legalMoves;
  if (root.length === 1) return root[0];
  const cache = new Map();
  const OUT_OF_POINTS = {};

  function key(board, s, m) {
    let k = s === 'black' ? 'b' : 'r';
    for (let x = 0; x < 4; x++) {
      for (let y = 0; y < 4; y++) {
        const c = board[x][y];
        k += c === null ? '.' : c === 'black' ? 'b' : 'r';
      }
    }
    return k + m.from[0] + m.from[1] + m.to[0] + m.to[1];
  }

  function play(board, s, m) {
    const k = key(board, s, m);
    let r = cache.get(k);
    if (r === undefined) {
      if (Rules.remaining() < 1) throw OUT_OF_POINTS;
      r = Rules.apply(board, s, m);
      cache.set(k, r);
    }
    return r;
  }

  function count(board, s) {
    let n = 0;
    for (let x = 0; x < 4; x++) for (let y = 0; y < 4; y++) if (board[x][y] === s) n++;
    return n;
  }

  // Score for `s` to move on `board`.
  function evaluate(board, s) {
    const o = Rules.other(s);
    const material = count(board, s) - count(board, o);
    const mobility = Rules.legalMoves(board, s).length - Rules.legalMoves(board, o).length;
    return 100 * material + mobility;
  }

  // Known-capturing moves first (from the cache), the rest in the engine's order.
  function ordered(board, s, moves) {
    const caps = [];
    const rest = [];
    for (const m of moves) {
      const r = cache.get(key(board, s, m));
      if (r !== undefined && r.captured.length > 0) caps.push(m); else rest.push(m);
    }
    return caps.concat(rest);
  }

  function negamax(board, s, ncm, depth, alpha, beta) {
    const v = Rules.judge(board, ncm);
    if (v) {
      if (v.winner === null) return 0;
      return v.winner === s ? WIN + depth : -WIN - depth;
    }
    if (depth === 0) return evaluate(board, s);
    const moves = Rules.legalMoves(board, s);
    if (moves.length === 0) return -negamax(board, Rules.other(s), ncm, depth - 1, -beta, -alpha);
    let best = -Infinity;
    for (const m of ordered(board, s, moves)) {
      const r = play(board, s, m);
      const next = r.captured.length > 0 ? 0 : ncm + 1;
      const score = -negamax(r.board, Rules.other(s), next, depth - 1, -beta, -alpha);
      if (score > best) best = score;
      if (best > alpha) alpha = best;
      if (alpha >= beta) break;
    }
    return best;
  }

  const side = me.side;
  const opp = opponent.side;
  let order = root.slice();
  let choice = root[Math.floor(game.random() * root.length)];
  for (let depth = 1; depth <= 6; depth++) {
    let bestScore = -Infinity;
    let bestMove = null;
    let searched = 0;
    try {
      for (const m of order) {
        const r = play(game.board, side, m);
        const next = r.captured.length > 0 ? 0 : game.noCaptureMoves + 1;
        // Small random tie-break so equal moves vary from game to game.
        const score = -negamax(r.board, opp, next, depth - 1, -WIN * 2, -bestScore) + game.random() * 0.5;
        searched++;
        if (score > bestScore) { bestScore = score; bestMove = m; }
      }
    } catch (e) {
      if (e !== OUT_OF_POINTS) throw e;
    }
    // A partial iteration still counts: the previous best is searched first, so any move
    // preferred over it here is better.
    if (bestMove !== null) choice = bestMove;
    if (searched < order.length) break;
    order = [bestMove].concat(order.filter(function (m) { return m !== bestMove; }));
    if (bestScore >= WIN) break;
  }
  return choice;
};
