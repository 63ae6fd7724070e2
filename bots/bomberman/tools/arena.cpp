// Local test referee for the bundled Bomberman bots: plays matches between bot executables
// following the rules digest (notes/bomberman-contract.md) so the bots can be measured while
// `farm play` is not available. Its maps are NOT the official generator's maps.
// Build: g++ -std=c++20 -O2 -o arena arena.cpp
// Use:   ./arena --seeds 1 20 Name=./exe Name2=./exe2 ...   (prints one line per game and means)
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <vector>

struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
};

struct Bot {
  std::string name, path;
  pid_t pid = -1;
  int in = -1, out = -1;
  std::string buf;
  double maxMs = 0, sumMs = 0;
  int answers = 0, slow = 0;
  std::string fault;
};

static bool startBot(Bot& b) {
  int p1[2], p2[2];
  if (pipe(p1) || pipe(p2)) return false;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(p1[0], 0);
    dup2(p2[1], 1);
    close(p1[1]); close(p2[0]); close(p1[0]); close(p2[1]);
    execl(b.path.c_str(), b.path.c_str(), (char*)nullptr);
    _exit(127);
  }
  close(p1[0]); close(p2[1]);
  b.pid = pid; b.in = p1[1]; b.out = p2[0];
  return true;
}
static bool sendAll(Bot& b, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t w = write(b.in, s.data() + off, s.size() - off);
    if (w <= 0) return false;
    off += w;
  }
  return true;
}
// reads one line within ms; returns false on timeout/eof
static bool readLine(Bot& b, int ms, std::string& line) {
  auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    size_t nl = b.buf.find('\n');
    if (nl != std::string::npos) { line = b.buf.substr(0, nl); b.buf.erase(0, nl + 1); return true; }
    int left = ms - (int)std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
    if (left <= 0) return false;
    pollfd pf{b.out, POLLIN, 0};
    int r = poll(&pf, 1, left);
    if (r <= 0) return false;
    char tmp[4096];
    ssize_t n = read(b.out, tmp, sizeof tmp);
    if (n <= 0) return false;
    b.buf.append(tmp, n);
  }
}

struct BombS { int owner, x, y, at; };

struct Result { std::vector<double> points; std::vector<int> rank, death; std::vector<double> kills; int turns; std::vector<std::string> faults; std::vector<double> maxMs; };

static FILE* logFile = nullptr;
static Result play(std::vector<Bot> bots, uint64_t seed, bool verbose, int timeoutMs) {
  int n = bots.size();
  int side, TL, FS, SI;
  if (n == 2) { side = 13; TL = 300; FS = 150; SI = 20; }
  else if (n == 4) { side = 17; TL = 450; FS = 250; SI = 25; }
  else {
    int k = 0; while (k * k < 14 * n) k++;
    side = 2 * k + 1; FS = 150 + 25 * (n - 2); SI = n == 3 ? 20 : 25; TL = FS + SI * (side / 2) + 25;
  }
  const int FUSE = 4, RANGE = 3, CAP = 2, FT = 2;
  Rng rng{seed * 1000003ULL + n};
  std::vector<char> tile(side * side, '.');
  auto id = [&](int x, int y) { return y * side + x; };
  std::vector<std::pair<int, int>> spawns;
  if (n == 2) spawns = {{1, 1}, {side - 2, side - 2}};
  else if (n == 4) spawns = {{1, 1}, {side - 2, 1}, {side - 2, side - 2}, {1, side - 2}};
  else {
    std::vector<std::pair<int, int>> ring;
    for (int x = 1; x <= side - 2; x += 2) ring.push_back({x, 1});
    for (int y = 3; y <= side - 2; y += 2) ring.push_back({side - 2, y});
    for (int x = side - 4; x >= 1; x -= 2) ring.push_back({x, side - 2});
    for (int y = side - 4; y >= 3; y -= 2) ring.push_back({1, y});
    int R = ring.size();
    int s = rng.next() % R;
    for (int i = 0; i < n; i++) spawns.push_back(ring[(s + (long long)i * R / n) % R]);
  }
  for (int y = 0; y < side; y++)
    for (int x = 0; x < side; x++) {
      char c = '.';
      if (x == 0 || y == 0 || x == side - 1 || y == side - 1 || (x % 2 == 0 && y % 2 == 0)) c = '#';
      else if ((uint32_t)rng.next() < 1803886264u) c = '+';
      for (auto [sx, sy] : spawns) if (c == '+' && std::abs(sx - x) + std::abs(sy - y) <= 2) c = '.';
      tile[id(x, y)] = c;
    }
  std::vector<int> px(n), py(n), death(n, -1);
  std::vector<char> alive(n, 1);
  std::vector<int> kn(n, 0);  // kills in units of 1/2520
  for (int i = 0; i < n; i++) { px[i] = spawns[i].first; py[i] = spawns[i].second; }
  std::vector<BombS> bombs;
  std::vector<std::map<int, int>> src(side * side);  // owner -> last lethal
  std::vector<std::string> faults(n);
  for (auto& b : bots) if (!startBot(b)) b.fault = "start";
  for (int i = 0; i < n; i++) {
    char ln[256];
    snprintf(ln, sizeof ln, "INIT %d %d %d %d %d %d %d %d %d %d\n", side, n, i, TL, FUSE, RANGE, CAP, FT, FS, SI);
    sendAll(bots[i], ln);
  }
  int t = 0;
  auto ringOf = [&](int x, int y) { return std::min(std::min(x, y), std::min(side - 1 - x, side - 1 - y)); };
  while (true) {
    // build text
    std::string s = "TURN " + std::to_string(t) + "\nBOARD\n";
    for (int y = 0; y < side; y++) { s.append(&tile[id(0, y)], side); s += '\n'; }
    for (int i = 0; i < n; i++) s += "P " + std::to_string(i) + " " + std::to_string(px[i]) + " " + std::to_string(py[i]) + " " + (alive[i] ? "1" : "0") + "\n";
    s += "BOMBS " + std::to_string(bombs.size()) + "\n";
    for (auto& b : bombs) s += "B " + std::to_string(b.owner) + " " + std::to_string(b.x) + " " + std::to_string(b.y) + " " + std::to_string(b.at) + "\n";
    std::string fl, so; int fc = 0, sc = 0;
    for (int c = 0; c < side * side; c++) {
      int mx = -1;
      for (auto [o, l] : src[c]) if (l >= t) { mx = std::max(mx, l); so += "O " + std::to_string(c % side) + " " + std::to_string(c / side) + " " + std::to_string(o) + " " + std::to_string(l) + "\n"; sc++; }
      if (mx >= 0) { fl += "F " + std::to_string(c % side) + " " + std::to_string(c / side) + " " + std::to_string(mx) + "\n"; fc++; }
    }
    s += "FLAMES " + std::to_string(fc) + "\n" + fl;
    s += "STATUS " + std::to_string(n) + "\n";
    for (int i = 0; i < n; i++) {
      int g = std::gcd(kn[i], 2520);
      s += "S " + std::to_string(i) + " " + std::to_string(death[i]) + " " + std::to_string(kn[i] / g) + " " + std::to_string(2520 / g) + "\n";
    }
    s += "SOURCES " + std::to_string(sc) + "\n" + so + "END\n";
    // ask
    std::vector<int> mv(n, 0); std::vector<int> wantBomb(n, 0); std::vector<char> faulted(n, 0);
    for (int i = 0; i < n; i++) {
      if (!alive[i]) continue;
      auto t0 = std::chrono::steady_clock::now();
      std::string line;
      bool ok = bots[i].fault.empty() && sendAll(bots[i], s) && readLine(bots[i], t == 0 ? 2000 : timeoutMs, line);
      double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (ok) {
        bots[i].maxMs = std::max(bots[i].maxMs, t == 0 ? 0 : ms);
        if (t > 0 && ms > 50) bots[i].slow++;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        char m; int b; int tt; char extra;
        if (sscanf(line.c_str(), "%d %c %d%c", &tt, &m, &b, &extra) != 3 || tt != t || (b != 0 && b != 1) || !strchr("UDLRS", m) || line != std::to_string(t) + " " + m + " " + std::to_string(b)) {
          faulted[i] = 1; faults[i] = "bad:" + line + "@" + std::to_string(t);
        } else { mv[i] = std::string("SUDLR").find(m); wantBomb[i] = b; }
      } else { faulted[i] = 1; faults[i] = "timeout/eof@" + std::to_string(t); }
    }
    if (logFile) {
      // draw players and bombs onto the board rows for reading
      std::vector<std::string> rows(side);
      for (int y = 0; y < side; y++) rows[y] = std::string(&tile[id(0, y)], side);
      for (auto& bb : bombs) rows[bb.y][bb.x] = 'a' + (bb.at - t);
      for (int c = 0; c < side * side; c++) for (auto [o, l] : src[c]) if (l >= t) rows[c / side][c % side] = '*';
      for (int i = 0; i < n; i++) if (alive[i]) rows[py[i]][px[i]] = '0' + i;
      fprintf(logFile, "turn %d (bombs: a=explodes now, b=next turn...; *=flame)\n", t);
      for (auto& r : rows) fprintf(logFile, "  %s\n", r.c_str());
      for (int i = 0; i < n; i++) if (alive[i]) fprintf(logFile, "  P%d (%d,%d) -> %c %d\n", i, px[i], py[i], "SUDLR"[mv[i]], wantBomb[i]);
    }
    // phase 1
    for (int i = 0; i < n; i++) if (alive[i] && faulted[i]) { alive[i] = 0; death[i] = t; bots[i].fault = "x"; }
    std::vector<char> frozen(n, 0);
    if (t >= FS && (t - FS) % SI == 0) {
      int L = 1 + (t - FS) / SI;
      for (int y = 0; y < side; y++) for (int x = 0; x < side; x++) if (ringOf(x, y) <= L) { tile[id(x, y)] = '#'; src[id(x, y)].clear(); }
      bombs.erase(std::remove_if(bombs.begin(), bombs.end(), [&](auto& b) { return ringOf(b.x, b.y) <= L; }), bombs.end());
      for (int i = 0; i < n; i++) if (alive[i] && ringOf(px[i], py[i]) <= L) { alive[i] = 0; death[i] = t; }
    }
    // phase 2
    auto bombAt = [&](int x, int y) { for (auto& b : bombs) if (b.x == x && b.y == y) return true; return false; };
    std::map<int, std::vector<int>> req;
    for (int i = 0; i < n; i++) {
      if (!alive[i] || !wantBomb[i]) continue;
      int cnt = 0; for (auto& b : bombs) if (b.owner == i) cnt++;
      if (cnt >= CAP || bombAt(px[i], py[i])) continue;
      req[id(px[i], py[i])].push_back(i);
    }
    for (auto& [c, v] : req) if (v.size() == 1) bombs.push_back({v[0], c % side, c / side, t + FUSE});
    // phase 3
    static const int DX[5] = {0, 0, 0, -1, 1}, DY[5] = {0, -1, 1, 0, 0};
    std::vector<int> tx(n), ty(n); std::vector<char> stay(n, 0);
    for (int i = 0; i < n; i++) {
      if (!alive[i]) continue;
      tx[i] = px[i] + DX[mv[i]]; ty[i] = py[i] + DY[mv[i]];
      if (mv[i] != 0 && (tile[id(tx[i], ty[i])] != '.' || bombAt(tx[i], ty[i]))) { tx[i] = px[i]; ty[i] = py[i]; }
    }
    for (int i = 0; i < n; i++) if (alive[i]) for (int j = 0; j < n; j++) if (j != i && alive[j] && tx[i] == tx[j] && ty[i] == ty[j]) stay[i] = 1;
    for (int i = 0; i < n; i++) if (alive[i] && tx[i] == px[i] && ty[i] == py[i]) stay[i] = 1;
    bool ch = true;
    while (ch) {
      ch = false;
      for (int i = 0; i < n; i++) if (alive[i] && !stay[i]) for (int j = 0; j < n; j++) if (j != i && alive[j] && stay[j] && px[j] == tx[i] && py[j] == ty[i]) { stay[i] = 1; ch = true; }
    }
    for (int i = 0; i < n; i++) if (alive[i] && !stay[i]) { px[i] = tx[i]; py[i] = ty[i]; }
    // phase 4
    int C = side * side;
    std::vector<int> bat(C, -1);
    for (size_t i = 0; i < bombs.size(); i++) bat[id(bombs[i].x, bombs[i].y)] = i;
    std::vector<char> det(bombs.size(), 0);
    std::vector<int> q;
    for (size_t i = 0; i < bombs.size(); i++) {
      bool fl2 = false; for (auto [o, l] : src[id(bombs[i].x, bombs[i].y)]) if (l >= t) fl2 = true;
      if (bombs[i].at == t || fl2) { det[i] = 1; q.push_back(i); }
    }
    std::vector<std::set<int>> burn(C), boxBy(C);
    for (size_t qi = 0; qi < q.size(); qi++) {
      auto b = bombs[q[qi]];
      burn[id(b.x, b.y)].insert(b.owner);
      for (int d = 1; d < 5; d++) {
        int x = b.x, y = b.y;
        for (int r = 0; r < RANGE; r++) {
          x += DX[d]; y += DY[d];
          int c = id(x, y);
          if (tile[c] == '#') break;
          burn[c].insert(b.owner);
          if (tile[c] == '+') { boxBy[c].insert(b.owner); break; }
          if (bat[c] >= 0) { if (!det[bat[c]]) { det[bat[c]] = 1; q.push_back(bat[c]); } break; }
        }
      }
    }
    // phase 5
    std::vector<BombS> nb;
    for (size_t i = 0; i < bombs.size(); i++) if (!det[i]) nb.push_back(bombs[i]);
    bombs = nb;
    for (int c = 0; c < C; c++) {
      if (!boxBy[c].empty()) tile[c] = '.';
      for (int o : burn[c]) src[c][o] = std::max(src[c].count(o) ? src[c][o] : -1, t + FT - 1);
    }
    for (int i = 0; i < n; i++) {
      if (!alive[i]) continue;
      std::set<int> killers; bool hot = false;
      for (auto [o, l] : src[id(px[i], py[i])]) if (l >= t) { hot = true; if (o != i) killers.insert(o); }
      if (hot) {
        if (logFile) fprintf(logFile, "  DEATH P%d at (%d,%d) turn %d\n", i, px[i], py[i], t);
        alive[i] = 0; death[i] = t;
        for (int k : killers) kn[k] += 2520 / killers.size();
      }
    }
    for (int c = 0; c < C; c++) for (auto it = src[c].begin(); it != src[c].end();) { if (it->second < t + 1) it = src[c].erase(it); else ++it; }
    t++;
    int liv = 0; for (int i = 0; i < n; i++) liv += alive[i];
    if (liv <= 1 || t >= TL) break;
  }
  for (auto& b : bots) if (b.pid > 0) close(b.in);  // EOF lets a bot exit on its own
  for (auto& b : bots) {
    if (b.pid <= 0) continue;
    for (int i = 0; i < 50 && waitpid(b.pid, nullptr, WNOHANG) == 0; i++) usleep(4000);
    if (kill(b.pid, SIGKILL) == 0) waitpid(b.pid, nullptr, 0);
    close(b.out);
  }
  Result res; res.turns = t; res.death = death; res.faults = faults;
  std::vector<int> dt(n);
  for (int i = 0; i < n; i++) dt[i] = death[i] < 0 ? 1 << 29 : death[i];
  for (int i = 0; i < n; i++) {
    int r = 1, k = 0;
    for (int j = 0; j < n; j++) { if (dt[j] > dt[i]) r++; if (dt[j] == dt[i]) k++; }
    double surv = n - r - (k - 1) / 2.0;
    res.kills.push_back(kn[i] / 2520.0);
    res.points.push_back(surv + kn[i] / 2520.0 / 2);
    res.maxMs.push_back(bots[i].maxMs);
  }
  for (int i = 0; i < n; i++) { int r = 1; for (int j = 0; j < n; j++) if (res.points[j] > res.points[i] + 1e-9) r++; res.rank.push_back(r); }
  if (verbose) {
    printf("seed %llu turns %d:", (unsigned long long)seed, t);
    for (int i = 0; i < n; i++) printf(" %s[pts %.2f r%d d%d k%.2f%s%s]", bots[i].name.c_str(), res.points[i], res.rank[i], death[i], res.kills[i], faults[i].empty() ? "" : " FAULT ", faults[i].c_str());
    printf("\n");
  }
  return res;
}

int main(int argc, char** argv) {
  signal(SIGPIPE, SIG_IGN);
  uint64_t s0 = 1, s1 = 1; bool verbose = true; bool rotate = false; int timeoutMs = 1000;
  std::vector<Bot> bots;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--seeds" && i + 2 < argc) { s0 = atoll(argv[i + 1]); s1 = atoll(argv[i + 2]); i += 2; }
    else if (a == "--quiet") verbose = false;
    else if (a == "--log" && i + 1 < argc) logFile = fopen(argv[++i], "w");
    else if (a == "--rotate") rotate = true;
    else if (a == "--timeout" && i + 1 < argc) timeoutMs = atoi(argv[++i]);
    else { auto e = a.find('='); Bot b; b.name = a.substr(0, e); b.path = a.substr(e + 1); bots.push_back(b); }
  }
  int n = bots.size();
  std::map<std::string, std::vector<double>> pts, rk; std::map<std::string, double> maxMs; std::map<std::string, int> nf;
  for (uint64_t s = s0; s <= s1; s++) {
    std::vector<Bot> seat = bots;
    if (rotate) std::rotate(seat.begin(), seat.begin() + (s % n), seat.end());
    Result r = play(seat, s, verbose, timeoutMs);
    for (int i = 0; i < n; i++) {
      pts[seat[i].name].push_back(r.points[i]); rk[seat[i].name].push_back(r.rank[i]);
      maxMs[seat[i].name] = std::max(maxMs[seat[i].name], r.maxMs[i]);
      if (!r.faults[i].empty()) nf[seat[i].name]++;
    }
  }
  printf("%-12s %6s %8s %8s %8s %7s\n", "bot", "games", "meanPts", "meanRank", "maxMs", "faults");
  for (auto& b : bots) {
    auto& p = pts[b.name]; auto& r = rk[b.name];
    printf("%-12s %6zu %8.3f %8.3f %8.2f %7d\n", b.name.c_str(), p.size(), std::accumulate(p.begin(), p.end(), 0.0) / p.size(), std::accumulate(r.begin(), r.end(), 0.0) / r.size(), maxMs[b.name], nf[b.name]);
  }
}
