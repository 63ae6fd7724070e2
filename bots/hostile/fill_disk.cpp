// Hostile bot: Writes into its scratch dir until refused (ignoring SIGXFSZ), many files, up to 1 GiB.
#include <csignal>
#include <fcntl.h>
#include <unistd.h>
#include <vector>
// --- shared by every hostile bot (each file stays a single self-contained source) ---
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

static int g_counter = 0;
// Reads one turn's input (until a line END); returns its turn number, -1 at end of input.
static int read_turn() {
    std::string line;
    int t = -1;
    while (std::getline(std::cin, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.rfind("TURN ", 0) == 0) t = std::atoi(line.c_str() + 5);
        if (line == "END") {
            if (t < 0) t = g_counter;
            ++g_counter;
            return t;
        }
    }
    return -1;
}
static void answer(int t) { std::cout << t << " S 0" << std::endl; }
// One line per attempt on stderr: "ATTACK <what>: blocked (<errno>)" or "ATTACK <what>: SUCCEEDED ...".
static void report(const char* what, bool ok, const char* extra = "") {
    if (ok) std::fprintf(stderr, "ATTACK %s: SUCCEEDED %s\n", what, extra);
    else std::fprintf(stderr, "ATTACK %s: blocked (%s)\n", what, std::strerror(errno));
    std::fflush(stderr);
}
// ---
int main() {
    std::signal(SIGXFSZ, SIG_IGN);
    int t = read_turn();
    std::vector<char> chunk(1 << 20, 'd');
    long long total = 0;
    int err = 0;
    for (int f = 0; f < 1024 && total < (1ll << 30) && !err; ++f) {
        int fd = open(("fill" + std::to_string(f)).c_str(), O_WRONLY | O_CREAT, 0600);
        if (fd < 0) { err = errno; break; }
        for (int i = 0; i < 64; ++i) {
            ssize_t n = write(fd, chunk.data(), chunk.size());
            if (n <= 0) { if (n < 0 && errno != EFBIG) err = errno; break; }
            total += n;
        }
        close(fd);
    }
    std::fprintf(stderr, "filled %lld bytes, stopped by: %s\n", total, err ? std::strerror(err) : "file size limit");
    for (; t >= 0; t = read_turn()) answer(t);
}
