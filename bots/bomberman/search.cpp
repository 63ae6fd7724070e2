// ---- shared core: protocol parsing and a forward model of bombs, chains, flames and shrink ----
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>
#ifdef BM_TIMING
#include <chrono>
#include <ctime>
#endif

namespace bm {

struct Bomb { int owner, x, y, at; };
struct Player { int x = 0, y = 0; bool alive = false; };

// Static match parameters from the INIT line.
int S = 0, N = 0, ME = 0, TL = 0, FUSE = 4, RANGE = 3, CAP = 2, FT = 2, FS = 150, SI = 20;

// Per-turn state.
int T = 0;
std::vector<char> tile;            // '#', '+', '.'  row-major y*S+x
std::vector<Player> pl;
std::vector<Bomb> bombs;
std::vector<int> flameLast;        // max last-lethal turn per cell, -1 if none
std::vector<char> bombCell;        // 1 where a bomb lies

#ifdef BM_TIMING
// Compile with -DBM_TIMING to get the slowest turn (time from reading TURN to answering) on stderr.
struct TurnClock {
  std::chrono::steady_clock::time_point start;
  std::clock_t cpuStart = 0;
  double maxMs = 0, sumMs = 0, maxCpu = 0;
  int turns = 0, maxTurn = -1;
  ~TurnClock() {
    std::fprintf(stderr, "timing: %d turns, wall mean %.3f ms max %.3f ms (turn %d), cpu max %.3f ms\n",
                 turns, turns ? sumMs / turns : 0.0, maxMs, maxTurn, maxCpu);
  }
};
TurnClock turnClock;
#endif

inline int idx(int x, int y) { return y * S + x; }
inline int cx(int c) { return c % S; }
inline int cy(int c) { return c / S; }
const int DX[5] = {0, 0, 0, -1, 1};
const int DY[5] = {0, -1, 1, 0, 0};
const char MV[5] = {'S', 'U', 'D', 'L', 'R'};

inline int ring(int c) {
  int x = cx(c), y = cy(c);
  return std::min(std::min(x, y), std::min(S - 1 - x, S - 1 - y));
}
// First turn at whose start the cell is a wall because of shrinking (huge if never).
inline int wallTurn(int c) {
  int d = ring(c);
  if (d == 0) return -1000000;
  return FS + (d - 1) * SI;
}
inline bool isShrinkTurn(int t) { return t >= FS && (t - FS) % SI == 0; }
inline int shrinkLayer(int t) { return 1 + (t - FS) / SI; }

bool readInit() {
  std::string w;
  if (!(std::cin >> w) || w != "INIT") return false;
  std::cin >> S >> N >> ME >> TL >> FUSE >> RANGE >> CAP >> FT >> FS >> SI;
  return bool(std::cin);
}

// Reads one TURN block up to END. Returns false on EOF or garbage.
bool readTurn() {
  std::string w;
  if (!(std::cin >> w)) return false;
  if (w != "TURN") return false;
  std::cin >> T;
#ifdef BM_TIMING
  turnClock.start = std::chrono::steady_clock::now();
  turnClock.cpuStart = std::clock();
#endif
  tile.assign(S * S, '#');
  pl.assign(N, Player());
  bombs.clear();
  flameLast.assign(S * S, -1);
  while (std::cin >> w) {
    if (w == "END") {
      bombCell.assign(S * S, 0);
      for (const Bomb& b : bombs)
        if (b.x >= 0 && b.y >= 0 && b.x < S && b.y < S) bombCell[idx(b.x, b.y)] = 1;
      return true;
    }
    if (w == "BOARD") {
      for (int y = 0; y < S; y++) {
        std::string row;
        std::cin >> row;
        for (int x = 0; x < S && x < (int)row.size(); x++) tile[idx(x, y)] = row[x];
      }
    } else if (w == "P") {
      int id, x, y, a;
      std::cin >> id >> x >> y >> a;
      if (id >= 0 && id < N) { pl[id].x = x; pl[id].y = y; pl[id].alive = a != 0; }
    } else if (w == "B") {
      Bomb b;
      std::cin >> b.owner >> b.x >> b.y >> b.at;
      bombs.push_back(b);
    } else if (w == "F") {
      int x, y, l;
      std::cin >> x >> y >> l;
      if (x >= 0 && y >= 0 && x < S && y < S) flameLast[idx(x, y)] = std::max(flameLast[idx(x, y)], l);
    } else if (w == "S") {
      int id, d; long long a, b;
      std::cin >> id >> d >> a >> b;
    } else if (w == "O") {
      int x, y, o, l;
      std::cin >> x >> y >> o >> l;
    } else if (w == "BOMBS" || w == "FLAMES" || w == "STATUS" || w == "SOURCES") {
      int k;
      std::cin >> k;
    }
  }
  return false;
}

void answer(int mv, bool bomb) {
  std::printf("%d %c %d\n", T, MV[mv], bomb ? 1 : 0);
  std::fflush(stdout);
#ifdef BM_TIMING
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - turnClock.start).count();
  turnClock.turns++;
  turnClock.sumMs += ms;
  if (ms > turnClock.maxMs) { turnClock.maxMs = ms; turnClock.maxTurn = T; }
  turnClock.maxCpu = std::max(turnClock.maxCpu, (std::clock() - turnClock.cpuStart) * 1000.0 / CLOCKS_PER_SEC);
#endif
}

// Forward model. Bit k of a mask refers to absolute turn T+k.
const int H = 12;
struct Future {
  std::vector<uint32_t> deadly;   // standing here after the move of turn T+k kills (fire or coming wall)
  std::vector<uint32_t> blocked;  // entering here during the move of turn T+k is impossible
  std::vector<uint32_t> fire;     // fire only (no shrink)
  std::vector<int> boxGone;       // turn the box is destroyed (INT_MAX if never)
  std::vector<int> fireOwnerMe;   // earliest turn a bomb of `me` burns this cell (for bookkeeping)
};

// Simulates from the start of turn T with the given bombs (existing plus hypothetical ones),
// assuming nobody places further bombs.
void simulate(const std::vector<Bomb>& start, Future& f) {
  int C = S * S;
  f.deadly.assign(C, 0);
  f.blocked.assign(C, 0);
  f.fire.assign(C, 0);
  f.boxGone.assign(C, 1 << 30);
  std::vector<char> tl = tile;
  std::vector<int> fl = flameLast;
  std::vector<Bomb> bs = start;
  std::vector<char> alive(bs.size(), 1);
  std::vector<int> bombAt(C, -1);
  std::vector<char> det(bs.size()), burn(C), boxHit(C);
  std::vector<int> q;
  q.reserve(bs.size());
  for (int k = 0; k < H; k++) {
    int t = T + k;
    if (isShrinkTurn(t)) {
      int L = shrinkLayer(t);
      for (int c = 0; c < C; c++)
        if (ring(c) <= L) { tl[c] = '#'; fl[c] = -1; }
      for (size_t i = 0; i < bs.size(); i++)
        if (alive[i] && ring(idx(bs[i].x, bs[i].y)) <= L) alive[i] = 0;
    }
    std::fill(bombAt.begin(), bombAt.end(), -1);
    for (size_t i = 0; i < bs.size(); i++)
      if (alive[i]) bombAt[idx(bs[i].x, bs[i].y)] = (int)i;
    uint32_t bit = 1u << k;
    for (int c = 0; c < C; c++)
      if (tl[c] != '.' || bombAt[c] >= 0) f.blocked[c] |= bit;
    // explosions
    std::fill(det.begin(), det.end(), 0);
    std::fill(burn.begin(), burn.end(), 0);
    std::fill(boxHit.begin(), boxHit.end(), 0);
    q.clear();
    for (size_t i = 0; i < bs.size(); i++)
      if (alive[i] && (bs[i].at == t || fl[idx(bs[i].x, bs[i].y)] >= t)) { det[i] = 1; q.push_back((int)i); }
    for (size_t qi = 0; qi < q.size(); qi++) {
      const Bomb& b = bs[q[qi]];
      burn[idx(b.x, b.y)] = 1;
      for (int d = 1; d < 5; d++) {
        int x = b.x, y = b.y;
        for (int r = 0; r < RANGE; r++) {
          x += DX[d]; y += DY[d];
          if (x < 0 || y < 0 || x >= S || y >= S) break;
          int c = idx(x, y);
          if (tl[c] == '#') break;
          burn[c] = 1;
          if (tl[c] == '+') { boxHit[c] = 1; break; }
          if (bombAt[c] >= 0) {
            if (!det[bombAt[c]]) { det[bombAt[c]] = 1; q.push_back(bombAt[c]); }
            break;
          }
        }
      }
    }
    for (int i : q) alive[i] = 0;
    for (int c = 0; c < C; c++) {
      if (boxHit[c]) { tl[c] = '.'; f.boxGone[c] = t; }
      if (burn[c]) fl[c] = std::max(fl[c], t + FT - 1);
      if (fl[c] >= t) { f.fire[c] |= bit; f.deadly[c] |= bit; }
      if (wallTurn(c) <= t + 1) f.deadly[c] |= bit;
    }
  }
}

// Occupancy search in (cell, turn). The agent stands on `from` before the move of turn T+k0
// (or has landed on `from` after the move of T+k0-1 when k0 > 0). `extra` (optional) has bit k
// set on cells that cannot be entered during the move of turn T+k (e.g. other players' bodies).
// Returns the number of cells still alive after the move of the last simulated turn; `depth`
// gets the last turn index survived (+1).
struct Reach { int count; int depth; };
Reach escape(const Future& f, int from, int k0, const std::vector<uint32_t>* extra) {
  int C = S * S;
  static std::vector<char> cur, nxt;
  cur.assign(C, 0);
  cur[from] = 1;
  int depth = k0;
  int count = 1;
  for (int k = k0; k < H; k++) {
    nxt.assign(C, 0);
    uint32_t bit = 1u << k;
    count = 0;
    for (int c = 0; c < C; c++) {
      if (!cur[c]) continue;
      int x = cx(c), y = cy(c);
      for (int d = 0; d < 5; d++) {
        int nx = x + DX[d], ny = y + DY[d];
        if (nx < 0 || ny < 0 || nx >= S || ny >= S) continue;
        int n = idx(nx, ny);
        if (d != 0) {
          if (f.blocked[n] & bit) continue;
          if (extra && ((*extra)[n] & bit)) continue;
        }
        if (f.deadly[n] & bit) continue;
        if (!nxt[n]) { nxt[n] = 1; count++; }
      }
    }
    if (count == 0) return {0, k};
    depth = k + 1;
    cur.swap(nxt);
  }
  return {count, depth};
}

// Survival check for an agent that has already landed on `at` after the move of turn T.
Reach escapeLanded(const Future& f, int at, const std::vector<uint32_t>* extra = nullptr) {
  if (f.deadly[at] & 1u) return {0, 0};
  return escape(f, at, 1, extra);
}

// Cells a bomb at `c` would hit with the current layout (boxes stop rays, bombs stop rays).
template <class Fn>
void blastCells(int c, Fn fn) {
  fn(c);
  int bx = cx(c), by = cy(c);
  for (int d = 1; d < 5; d++) {
    int x = bx, y = by;
    for (int r = 0; r < RANGE; r++) {
      x += DX[d]; y += DY[d];
      if (x < 0 || y < 0 || x >= S || y >= S) break;
      int n = idx(x, y);
      if (tile[n] == '#') break;
      fn(n);
      if (tile[n] == '+') break;
      if (bombCell[n]) break;
    }
  }
}


int myBombs(int who) {
  int k = 0;
  for (const Bomb& b : bombs) if (b.owner == who) k++;
  return k;
}
bool bombOn(int c) { return c >= 0 && c < (int)bombCell.size() && bombCell[c]; }

}  // namespace bm
// ---- end of shared core ----

// ---- search bot: safety-filtered one-ply search over the ten actions, scored with a forward
// model of timers, chains, flames and shrinking, a trap test for every opponent, a pessimistic
// "nearby opponents bomb now" check, and a potential field toward boxes, opponents and the centre.
using namespace bm;

static std::vector<int> potential(const Future& fb) {
  int C = S * S;
  const int NEG = -1000000;
  std::vector<int> val(C, NEG);
  int nextShrink = T < FS ? FS : FS + ((T - FS) / SI + 1) * SI;
  if (T >= FS && (T - FS) % SI == 0) nextShrink = T;
  bool late = T + 45 >= FS;
  int living = 0;
  for (int i = 0; i < N; i++) if (pl[i].alive) living++;
  int boxesLeft = 0;
  for (int c = 0; c < C; c++) if (tile[c] == '+' && fb.boxGone[c] > T + H) boxesLeft++;
  int attackW = boxesLeft < 6 ? 40 : (living <= 3 ? 18 : 10);
  (void)nextShrink;
  for (int c = 0; c < C; c++) {
    if (tile[c] != '.') continue;
    int wt = wallTurn(c);
    if (wt - T <= SI + 5) continue;  // next ring to become wall: never a target
    int v = 0;
    int hits = 0;
    bool hitsOpp = false;
    blastCells(c, [&](int n) {
      if (tile[n] == '+' && fb.boxGone[n] > T + H) hits++;
      for (int i = 0; i < N; i++)
        if (i != ME && pl[i].alive && idx(pl[i].x, pl[i].y) == n) hitsOpp = true;
    });
    v += 20 * hits;
    if (hitsOpp) v += attackW;
    if (late) v += 6 * ring(c);
    if (wt - T <= 30) v -= 40;
    val[c] = v;
  }
  // propagate max(v - cost*dist) over walkable cells
  std::vector<int> pot = val;
  std::vector<int> order;
  for (int round = 0; round < 2 * S * S; round++) {
    bool changed = false;
    for (int pass = 0; pass < 2; pass++) {
      int start = pass == 0 ? 0 : C - 1, step = pass == 0 ? 1 : -1;
      for (int c = start; c >= 0 && c < C; c += step) {
        if (tile[c] != '.') continue;
        int x = cx(c), y = cy(c);
        int cost = 4 + (bombOn(c) ? 4 : 0) + ((fb.fire[c] & 3u) ? 3 : 0);
        int best = pot[c];
        for (int d = 1; d < 5; d++) {
          int n = idx(x + DX[d], y + DY[d]);
          if (tile[n] != '.' || pot[n] == NEG) continue;
          best = std::max(best, pot[n] - cost);
        }
        if (best != pot[c]) { pot[c] = best; changed = true; }
      }
    }
    if (!changed) break;
  }
  return pot;
}

struct Choice { int mv; bool bomb; };

// Deadlock breaker memory: two bots that keep asking for the same cell both stay forever.
static int lastCell = -1, lastMove = 0, stuck = 0;

static Choice decide() {
  if (ME < 0 || ME >= N || !pl[ME].alive) return {0, false};
  int C = S * S;
  int myc = idx(pl[ME].x, pl[ME].y);
  std::vector<char> others(C, 0);
  for (int i = 0; i < N; i++)
    if (i != ME && pl[i].alive) others[idx(pl[i].x, pl[i].y)] = 1;

  Future fb, fm, pb, pm;
  simulate(bombs, fb);
  bool canBomb = myBombs(ME) < CAP && !bombOn(myc);
  std::vector<Bomb> withMine = bombs;
  withMine.push_back({ME, pl[ME].x, pl[ME].y, T + FUSE});
  if (canBomb) simulate(withMine, fm);
  // pessimistic worlds: (A) every nearby opponent that can bomb does so now; (B) every nearby
  // opponent steps towards us and bombs next turn (and, with a second bomb left, also now)
  std::vector<Bomb> pessA = bombs, pessB = bombs;
  for (int i = 0; i < N; i++) {
    if (i == ME || !pl[i].alive) continue;
    int d = std::abs(pl[i].x - pl[ME].x) + std::abs(pl[i].y - pl[ME].y);
    int oc = idx(pl[i].x, pl[i].y);
    if (d > RANGE + 4) continue;
    int budget = CAP - myBombs(i);
    if (budget <= 0) continue;
    bool hereFree = !bombOn(oc);
    if (hereFree) pessA.push_back({i, pl[i].x, pl[i].y, T + FUSE});
    int bestA = -1, bestD = 1 << 30;
    for (int dd = 1; dd < 5; dd++) {
      int ax = pl[i].x + DX[dd], ay = pl[i].y + DY[dd];
      int a = idx(ax, ay);
      if (tile[a] != '.' || bombOn(a)) continue;
      int da = std::abs(ax - pl[ME].x) + std::abs(ay - pl[ME].y);
      if (da < bestD) { bestD = da; bestA = a; }
    }
    if (bestA >= 0 && bestA != myc) {
      pessB.push_back({i, cx(bestA), cy(bestA), T + 1 + FUSE});
      budget--;
    }
    if (budget > 0 && hereFree) pessB.push_back({i, pl[i].x, pl[i].y, T + FUSE});
  }
  Future pa, pam;
  bool anyPessA = pessA.size() > bombs.size(), anyPessB = pessB.size() > bombs.size();
  if (anyPessA) simulate(pessA, pa);
  if (anyPessB) simulate(pessB, pb);
  if (canBomb) {
    pessA.push_back({ME, pl[ME].x, pl[ME].y, T + FUSE});
    pessB.push_back({ME, pl[ME].x, pl[ME].y, T + FUSE});
    if (anyPessA) simulate(pessA, pam);
    if (anyPessB) simulate(pessB, pm);
  }

  std::vector<int> pot = potential(fb);
  // other players' bodies: their cells are blocked on the next two moves, their neighbours on
  // the next one (pessimistic view); the optimistic view blocks only their cells, next move.
  std::vector<uint32_t> bodyP(C, 0), bodyF(C, 0);
  for (int i = 0; i < N; i++) {
    if (i == ME || !pl[i].alive) continue;
    int oc = idx(pl[i].x, pl[i].y);
    bodyP[oc] |= ~1u;
    bodyF[oc] |= 2u;
    for (int d = 1; d < 5; d++) {
      int a = idx(pl[i].x + DX[d], pl[i].y + DY[d]);
      if (tile[a] == '.') bodyP[a] |= 2u;
    }
  }

  // endgame: little room left before the last rings close, so pressure the opponents
  int room = 0;
  for (int c = 0; c < C; c++)
    if (tile[c] == '.' && wallTurn(c) > T + SI) room++;
  int living = 0;
  for (int i = 0; i < N; i++) if (pl[i].alive) living++;
  bool endgame = room <= 16;
  bool duel = endgame && living == 2 && N == 2;
  // value of placing a bomb here now (independent of the move)
  int bombVal = 0;
  if (canBomb) {
    int hits = 0;
    blastCells(myc, [&](int n) {
      if (tile[n] == '+' && fb.boxGone[n] > T + H) hits++;
    });
    bombVal += 30 * hits;
    for (int i = 0; i < N; i++) {
      if (i == ME || !pl[i].alive) continue;
      int oc = idx(pl[i].x, pl[i].y);
      int d = std::abs(pl[i].x - pl[ME].x) + std::abs(pl[i].y - pl[ME].y);
      if (d > 2 * RANGE + 4) continue;
      Reach r0 = escape(fb, oc, 0, nullptr);
      Reach r1 = escape(fm, oc, 0, nullptr);
      if (r0.count > 0 && r1.count == 0) bombVal += 300;
      else if (r1.count < r0.count && r1.count <= 2) bombVal += 50;
      else if (r1.count < r0.count && r1.count <= 5) bombVal += 15;
      bool inBlast = false;
      blastCells(myc, [&](int n) { if (n == oc) inBlast = true; });
      if (inBlast) bombVal += 8;
      if (duel) {
        bombVal += std::min(8, r0.count - r1.count) * 15;
        if (inBlast) bombVal += 40;
      }
    }
    if (bombVal == 0) bombVal = -20;
    else bombVal -= 5;
  }

  if (lastCell == myc && lastMove != 0) stuck++;
  else stuck = 0;
  auto exitsOf = [&](int c, bool placed) {
    int e = 0;
    for (int d = 1; d < 5; d++) {
      int a = idx(cx(c) + DX[d], cy(c) + DY[d]);
      if (placed && a == myc) continue;
      if (tile[a] == '.' && !bombOn(a) && wallTurn(a) - T > SI + 5) e++;
    }
    return e;
  };
  int nearOpp = 1 << 30;
  for (int i = 0; i < N; i++)
    if (i != ME && pl[i].alive)
      nearOpp = std::min(nearOpp, std::abs(pl[i].x - pl[ME].x) + std::abs(pl[i].y - pl[ME].y));
  long long bestScore = -(1LL << 60);
  Choice best{0, false};
  for (int b = 0; b < 2; b++) {
    if (b == 1 && !canBomb) continue;
    const Future& F = b ? fm : fb;
    const Future& PA = anyPessA ? (b ? pam : pa) : F;
    const Future& PB = anyPessB ? (b ? pm : pb) : F;
    for (int m = 0; m < 5; m++) {
      int nx = pl[ME].x + DX[m], ny = pl[ME].y + DY[m];
      int n = idx(nx, ny);
      if (m != 0 && (tile[n] != '.' || bombOn(n))) continue;
      std::vector<int> outs{n};
      if (m != 0) {
        bool contested = others[n] != 0;
        for (int d = 1; d < 5 && !contested; d++) {
          int ax = nx + DX[d], ay = ny + DY[d];
          if (ax < 0 || ay < 0 || ax >= S || ay >= S) continue;
          int a = idx(ax, ay);
          if (a != myc && others[a]) contested = true;
        }
        if (contested) outs.push_back(myc);
      }
      // main outcome: we land on n; if the move is contested we may stay on myc instead
      Reach r = escapeLanded(F, n, &bodyF);
      int safe = r.count, depth = r.depth;
      int ps = std::min(escapeLanded(PA, n, &bodyP).count, escapeLanded(PB, n, &bodyP).count);
      bool altBad = false, altPessBad = false;
      if (outs.size() > 1) {
        altBad = escapeLanded(F, myc, &bodyF).count == 0;
        altPessBad = escapeLanded(PA, myc, &bodyP).count == 0 || escapeLanded(PB, myc, &bodyP).count == 0;
      }
      long long score;
      if (safe == 0) {
        score = -1000000 + depth * 1000 + std::min(ps, 6);
      } else {
        score = 100000 + (ps > 0 || (duel && b) ? 20000 : 0) + std::min(safe, 6) * 10 + std::min(ps, 6) * 5 +
                pot[n] + (b ? bombVal : 0);
        if (outs.size() > 1) score -= 3 + (altBad ? 15000 : 0) + (altPessBad ? 3000 : 0);
        if (stuck >= 3 && m == lastMove) score -= 5000;
        if (nearOpp <= 4 && exitsOf(n, b == 1) <= 1) score -= 1500;
        int wt = wallTurn(n) - T;
        if (wt <= SI + 5) score -= (SI + 6 - wt) * 1000;
      }
      if (score > bestScore) { bestScore = score; best = {m, b == 1}; }
    }
  }
  lastCell = myc;
  lastMove = best.mv;
  return best;
}

int main() {
  std::ios::sync_with_stdio(false);
  if (!readInit()) return 0;
  while (readTurn()) {
    Choice c = decide();
    answer(c.mv, c.bomb);
  }
  return 0;
}
