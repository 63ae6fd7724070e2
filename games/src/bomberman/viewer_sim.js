// The Bomberman engine in JavaScript, for a tournament's viewer index (viewer_index.html, which
// embeds this file): a match's data file in the compact form (games::bomberman::index_sim) keeps
// only the moves, and this re-plays them into every frame exactly as the viewer data has it
// (games::bomberman::replay::viewer_data). It is a port of game.rs, movement.rs, explosion.rs
// and events.rs of the rules named in RULES; games/tests/viewer_sim.rs and
// coordinator/tests/viewer_pages.rs compare it with the Rust engine.
// MatchfarmSim.expand(data) turns a compact form into the viewer data (in place) or throws.
const MatchfarmSim = (() => {
  "use strict";
  const RULES = "matchfarm-bomberman/0.5-public-state";
  const WALL = "#", BOX = "+", EMPTY = ".";
  const STEP = { U: [0, -1], D: [0, 1], L: [-1, 0], R: [1, 0], S: [0, 0] };

  // Exact kill shares, as num_rational prints them: [numerator, denominator], reduced.
  const gcd = (a, b) => { a = Math.abs(a); b = Math.abs(b); while (b) [a, b] = [b, a % b]; return a; };
  const ratio = (n, d) => { const g = gcd(n, d) || 1; return [n / g, d / g]; };
  const addRatio = (a, b) => ratio(a[0] * b[1] + b[0] * a[1], a[1] * b[1]);
  const showRatio = (r) => (r[1] === 1 ? String(r[0]) : r[0] + "/" + r[1]);
  const owners = (mask, n) => { const out = []; for (let o = 0; o < n; o++) if (mask & (1 << o)) out.push(o); return out; };

  function newGame(params, board, spawns) {
    const side = params.side, n = params.players, cells = side * side;
    if (board.length !== side || board.some((r) => typeof r !== "string" || r.length !== side)) throw new Error("the initial board is not " + side + "x" + side);
    if (spawns.length !== n) throw new Error("the initial players are not " + n);
    return {
      params, side, n, t: 0, over: false,
      tiles: board.join("").split(""),
      bombHere: new Uint8Array(cells),
      bombs: [], ownBombs: new Array(n).fill(0),
      srcExpiry: new Array(cells * n).fill(0), flameExpiry: new Array(cells).fill(0),
      players: spawns.map(([x, y]) => ({ cell: y * side + x, alive: true, deathTurn: -1 })),
      alive: n, kills: Array.from({ length: n }, () => [0, 1]),
      burn: new Array(cells).fill(0),
    };
  }
  const xy = (g, c) => [c % g.side, Math.floor(c / g.side)];

  // game.rs Game::kill
  function kill(g, p, cause, killers, ev) {
    const pl = g.players[p];
    pl.alive = false; pl.deathTurn = g.t; g.alive -= 1;
    const list = owners(killers, g.n), k = list.length;
    const share = k > 0 ? ratio(1, k) : [0, 1];
    for (const o of list) g.kills[o] = addRatio(g.kills[o], share);
    ev.push({ type: "death", player: p, cause, killers: list, share: share[0] + "/" + share[1] });
  }

  function clearFlamesAt(g, c) {
    for (let o = 0; o < g.n; o++) g.srcExpiry[c * g.n + o] = 0;
    g.flameExpiry[c] = 0;
  }

  // Phase 1: expired flames, protocol faults, shrink.
  function cleanup(g, inputs, ev) {
    const { t, n } = g;
    for (let c = 0; c < g.flameExpiry.length; c++) {
      if (g.flameExpiry[c] === 0) continue;
      if (g.flameExpiry[c] <= t) { clearFlamesAt(g, c); continue; }
      for (let o = 0; o < n; o++) if (g.srcExpiry[c * n + o] <= t) g.srcExpiry[c * n + o] = 0;
    }
    for (let p = 0; p < n; p++) if (g.players[p].alive && inputs[p] === null) kill(g, p, "fault", 0, ev);
    const { first_shrink: first, shrink_interval: every } = g.params;
    if (every !== 0 && t >= first && (t - first) % every === 0) shrink(g, 1 + (t - first) / every, ev);
  }

  function shrink(g, layer, ev) {
    ev.push({ type: "shrink", layer });
    const s = g.side;
    for (let c = 0; c < s * s; c++) {
      const [x, y] = xy(g, c);
      const depth = Math.min(x, y, s - 1 - x, s - 1 - y);
      if (depth > layer || g.tiles[c] === WALL) continue;
      g.tiles[c] = WALL;
      if (g.bombHere[c]) {
        g.bombHere[c] = 0;
        const i = g.bombs.findIndex((b) => b.x + b.y * s === c);
        if (i >= 0) {
          const [b] = g.bombs.splice(i, 1);
          g.ownBombs[b.owner] -= 1;
          ev.push({ type: "bomb_removed", owner: b.owner, x: b.x, y: b.y });
        }
      }
      if (g.flameExpiry[c] !== 0) clearFlamesAt(g, c);
      for (let p = 0; p < g.n; p++) if (g.players[p].alive && g.players[p].cell === c) kill(g, p, "shrink", 0, ev);
    }
  }

  // Phase 2: bomb placement at the pre-move cells.
  function place(g, inputs, ev) {
    const n = g.n, wants = new Array(n).fill(false);
    for (let p = 0; p < n; p++) {
      const pl = g.players[p], a = inputs[p];
      if (!pl.alive || a === null || !a.bomb) continue;
      const reason = g.bombHere[pl.cell] ? "occupied" : g.ownBombs[p] >= g.params.capacity ? "capacity" : null;
      if (reason) { const [x, y] = xy(g, pl.cell); ev.push({ type: "bomb_failed", player: p, x, y, reason }); }
      wants[p] = reason === null;
    }
    if (!wants.includes(true)) return;
    for (let p = 0; p < n; p++) {
      if (!wants[p]) continue;
      const c = g.players[p].cell, [x, y] = xy(g, c);
      if (wants.some((w, q) => q !== p && w && g.players[q].cell === c)) {
        ev.push({ type: "bomb_failed", player: p, x, y, reason: "conflict" });
        continue;
      }
      g.bombs.push({ owner: p, x, y, explode_at: g.t + g.params.fuse });
      g.ownBombs[p] += 1;
      ev.push({ type: "bomb", player: p, x, y });
    }
    for (const b of g.bombs) g.bombHere[b.x + b.y * g.side] = 1;
  }

  // Phase 3 (movement.rs): simultaneous movement.
  function move(g, inputs, ev) {
    const n = g.n, P = g.players, target = new Array(n).fill(-1), stay = new Array(n).fill(false);
    for (let p = 0; p < n; p++) {
      if (!P[p].alive) continue;
      const [dx, dy] = STEP[inputs[p] === null ? "S" : inputs[p].mv];
      const c = P[p].cell, to = c + dx + dy * g.side;
      const free = to === c || (g.tiles[to] === EMPTY && !g.bombHere[to]);
      target[p] = free ? to : c;
    }
    for (let p = 0; p < n; p++) {
      if (!P[p].alive) continue;
      for (let q = 0; q < n; q++) if (q !== p && P[q].alive && target[q] === target[p]) { stay[p] = true; break; }
    }
    for (let p = 0; p < n; p++) if (stay[p]) target[p] = P[p].cell;
    for (let changed = true; changed;) {
      changed = false;
      for (let p = 0; p < n; p++) {
        if (!P[p].alive || stay[p] || target[p] === P[p].cell) continue;
        const tp = target[p];
        if (P.some((pq, q) => q !== p && pq.alive && pq.cell === tp && (stay[q] || target[q] === tp))) {
          stay[p] = true; target[p] = P[p].cell; changed = true;
        }
      }
    }
    for (let p = 0; p < n; p++) {
      if (!P[p].alive) continue;
      const from = P[p].cell;
      P[p].cell = target[p];
      const moved = inputs[p] !== null && inputs[p].mv !== "S";
      if (moved && target[p] === from) ev.push({ type: "blocked", player: p });
    }
  }

  // Phase 4 (explosion.rs): detonations and rays against the start-of-phase layout.
  function explode(g, ev) {
    const { t, side: s } = g, range = g.params.range;
    const detonating = g.bombs.map((b) => b.explode_at <= t || g.flameExpiry[b.x + b.y * s] > t);
    const queue = [], burned = [];
    detonating.forEach((go, i) => { if (go) queue.push(i); });
    const burn = (c, bit) => { if (g.burn[c] === 0) burned.push(c); g.burn[c] |= bit; };
    for (let head = 0; head < queue.length; head++) {
      const b = g.bombs[queue[head]], bit = 1 << b.owner, c0 = b.x + b.y * s;
      ev.push({ type: "explosion", owner: b.owner, x: b.x, y: b.y, chained: b.explode_at > t });
      burn(c0, bit);
      for (const d of [-s, s, -1, 1]) {
        let c = c0;
        for (let r = 0; r < range; r++) {
          c += d;
          if (g.tiles[c] === WALL) break;
          if (g.tiles[c] === BOX) { burn(c, bit); break; }
          burn(c, bit);
          if (g.bombHere[c]) {
            const j = g.bombs.findIndex((o) => o.x + o.y * s === c);
            if (j >= 0 && !detonating[j]) { detonating[j] = true; queue.push(j); }
            break;
          }
        }
      }
    }
    return { detonating, burned, any: queue.length > 0 };
  }

  // Phase 5 (explosion.rs): remove bombs and boxes, lay flames, eliminate players in fire.
  function flames(g, blast, ev) {
    const { t, n, side: s } = g;
    if (blast.any) {
      const kept = [];
      g.bombs.forEach((b, i) => {
        if (!blast.detonating[i]) { kept.push(b); return; }
        g.ownBombs[b.owner] -= 1; g.bombHere[b.x + b.y * s] = 0;
      });
      g.bombs = kept;
    }
    const expiry = t + g.params.flame_turns;
    for (const c of blast.burned) {
      const mask = g.burn[c];
      g.burn[c] = 0;
      if (g.tiles[c] === BOX) {
        g.tiles[c] = EMPTY;
        const [x, y] = xy(g, c);
        ev.push({ type: "box", x, y, by: owners(mask, n) });
      }
      if (expiry <= t) continue;
      g.flameExpiry[c] = Math.max(g.flameExpiry[c], expiry);
      for (const o of owners(mask, n)) g.srcExpiry[c * n + o] = Math.max(g.srcExpiry[c * n + o], expiry);
    }
    for (let p = 0; p < n; p++) {
      const pl = g.players[p];
      if (!pl.alive || g.flameExpiry[pl.cell] <= t) continue;
      let killers = 0;
      for (let o = 0; o < n; o++) if (o !== p && g.srcExpiry[pl.cell * n + o] > t) killers |= 1 << o;
      kill(g, p, "flame", killers, ev);
    }
  }

  // game.rs run_turn: inputs[p] is {mv, bomb} or null (a fault, or not asked).
  function step(g, inputs, ev) {
    if (g.over) return;
    cleanup(g, inputs, ev);
    place(g, inputs, ev);
    move(g, inputs, ev);
    flames(g, explode(g, ev), ev);
    g.t += 1;
    if (g.alive <= 1 || g.t >= g.params.turn_limit) g.over = true;
  }

  const rows = (g) => Array.from({ length: g.side }, (_, y) => g.tiles.slice(y * g.side, (y + 1) * g.side).join(""));
  const playersJson = (g) => g.players.map((p) => { const [x, y] = xy(g, p.cell); return { x, y, alive: p.alive }; });
  // viewer_data.rs flames_json: sources grouped per cell (row-major), owners in order.
  function flamesJson(g) {
    const out = [];
    for (let c = 0; c < g.flameExpiry.length; c++) {
      if (g.flameExpiry[c] === 0) continue;
      let cell = null;
      for (let o = 0; o < g.n; o++) {
        const e = g.srcExpiry[c * g.n + o];
        if (e === 0) continue;
        if (cell === null) { const [x, y] = xy(g, c); cell = { x, y, until: e - 1, owners: [] }; out.push(cell); }
        cell.until = Math.max(cell.until, e - 1);
        cell.owners.push(o);
      }
    }
    return out;
  }

  // viewer_data.rs frame_json: the state after turn t with what happened in it.
  function frame(g, t, actions, faults, aliveBefore, events) {
    const early = new Set(events.filter((e) => e.type === "death" && (e.cause === "fault" || e.cause === "shrink")).map((e) => e.player));
    return {
      t, actions,
      landed: g.players.map((p, i) => (aliveBefore[i] && !early.has(i) ? xy(g, p.cell) : null)),
      board: rows(g), players: playersJson(g),
      bombs: g.bombs.map((b) => ({ owner: b.owner, x: b.x, y: b.y, explode_at: b.explode_at })),
      flames: flamesJson(g),
      events: faults.map(([, player, kind, detail]) => ({ type: "fault", player, kind, detail })).concat(events),
      status: g.players.map((p, i) => ({ death_turn: p.deathTurn, kill_share: showRatio(g.kills[i]) })),
    };
  }

  const num = (v, what) => { if (!Number.isInteger(v) || v < 0) throw new Error(what + " is not a count"); return v; };
  // The compact form (index_sim::to_sim_form) to the viewer data, in place.
  function expand(data) {
    const meta = data.meta || {}, rules = data.sim || {}, initial = data.initial || {};
    if (meta.version !== RULES) throw new Error("this page re-plays " + RULES + ", not " + meta.version);
    const params = { players: num(meta.players, "players"), side: num(meta.side, "side") };
    for (const k of ["turn_limit", "first_shrink", "shrink_interval"]) params[k] = num(meta[k], k);
    for (const k of ["fuse", "range", "capacity", "flame_turns"]) params[k] = num(rules[k], k);
    const n = params.players, moves = String(data.moves || ""), faults = Array.isArray(data.faults) ? data.faults : [];
    if (n === 0 || moves.length % n !== 0) throw new Error("the moves do not fill whole turns");
    const g = newGame(params, Array.isArray(initial.board) ? initial.board : [], (initial.players || []).map((p) => [p.x, p.y]));
    const frames = [];
    for (let t = 0; t * n < moves.length; t++) {
      if (g.over) throw new Error("the game is over after turn " + (t - 1) + " but moves go on");
      const these = faults.filter((f) => Array.isArray(f) && f[0] === t);
      const inputs = [], actions = [];
      for (let p = 0; p < n; p++) {
        const ch = moves[t * n + p], fault = these.find((f) => f[1] === p);
        const mv = ch.toUpperCase();
        const input = Object.hasOwn(STEP, mv) && ch !== "." ? { mv, bomb: ch !== mv } : null;
        if (input === null && ch !== ".") throw new Error("turn " + t + ": bad move " + JSON.stringify(ch));
        inputs.push(fault ? null : input);
        actions.push(fault ? { fault: fault[2], detail: fault[3] } : input && { move: input.mv, bomb: input.bomb });
      }
      const aliveBefore = g.players.map((p) => p.alive), events = [];
      step(g, inputs, events);
      frames.push(frame(g, t, actions, these, aliveBefore, events));
    }
    data.frames = frames;
    delete data.sim; delete data.moves; delete data.faults;
    return data;
  }
  return { RULES, expand };
})();
