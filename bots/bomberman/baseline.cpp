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

// ---- baseline bot ("Base"): picks a goal (nearest cell where a bomb breaks boxes, else a cell
// next to an opponent, moving to the middle when the ring shrinks soon), bombs when that breaks
// boxes or an opponent stands in the blast, and only takes an action after which a timed escape
// route exists; if its plan is unsafe it takes the action with the most escape room.
using namespace bm;

struct Choice { int mv; bool bomb; };

static void bfs(int from, std::vector<int>& dist, std::vector<int>& first) {
  int C = S * S;
  dist.assign(C, -1);
  first.assign(C, 0);
  std::vector<int> q{from};
  dist[from] = 0;
  for (size_t i = 0; i < q.size(); i++) {
    int c = q[i];
    for (int d = 1; d < 5; d++) {
      int n = idx(cx(c) + DX[d], cy(c) + DY[d]);
      if (dist[n] >= 0 || tile[n] != '.' || bombOn(n)) continue;
      dist[n] = dist[c] + 1;
      first[n] = c == from ? d : first[c];
      q.push_back(n);
    }
  }
}

static Choice decide() {
  if (ME < 0 || ME >= N || !pl[ME].alive) return {0, false};
  int C = S * S;
  int myc = idx(pl[ME].x, pl[ME].y);
  Future fb, fm;
  simulate(bombs, fb);
  bool canBomb = myBombs(ME) < CAP && !bombOn(myc);
  if (canBomb) {
    std::vector<Bomb> w = bombs;
    w.push_back({ME, pl[ME].x, pl[ME].y, T + FUSE});
    simulate(w, fm);
  }
  auto safeAfter = [&](int m, bool b) {
    int n = idx(pl[ME].x + DX[m], pl[ME].y + DY[m]);
    if (m != 0 && (tile[n] != '.' || bombOn(n))) n = myc;
    return escapeLanded(b ? fm : fb, n).count;
  };
  // goal selection
  std::vector<int> dist, first;
  bfs(myc, dist, first);
  bool late = T + 30 >= FS;
  int goal = -1, goalScore = -(1 << 30);
  for (int c = 0; c < C; c++) {
    if (dist[c] < 0 || wallTurn(c) - T <= 15) continue;
    if (fb.fire[c] & 3u) continue;
    int h = 0;
    bool opp = false;
    blastCells(c, [&](int n) {
      if (tile[n] == '+' && fb.boxGone[n] > T + H) h++;
      for (int i = 0; i < N; i++) if (i != ME && pl[i].alive && idx(pl[i].x, pl[i].y) == n) opp = true;
    });
    int sc = -3 * dist[c] + 10 * h + (opp ? 6 : 0) + (late ? 4 * ring(c) : 0);
    if (h == 0 && !opp && !late) sc -= 100;
    if (sc > goalScore) { goalScore = sc; goal = c; }
  }
  // bomb here?
  if (canBomb) {
    int h = 0;
    bool opp = false;
    blastCells(myc, [&](int n) {
      if (tile[n] == '+' && fb.boxGone[n] > T + H) h++;
      for (int i = 0; i < N; i++) if (i != ME && pl[i].alive && idx(pl[i].x, pl[i].y) == n) opp = true;
    });
    if (h > 0 || (opp && T % 3 == 0)) {
      int bestM = -1, bestC = 0;
      for (int m = 0; m < 5; m++) {
        int k = safeAfter(m, true);
        if (k > bestC) { bestC = k; bestM = m; }
      }
      if (bestM >= 0) return {bestM, true};
    }
  }
  int want = (goal >= 0 && goal != myc) ? first[goal] : 0;
  if (safeAfter(want, false) > 0) return {want, false};
  int bestM = 0, bestC = -1;
  for (int m = 0; m < 5; m++) {
    int k = safeAfter(m, false);
    if (k > bestC) { bestC = k; bestM = m; }
  }
  return {bestM, false};
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
