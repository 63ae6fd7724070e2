// Hostile bot: Tries to create files outside its scratch dir (argv: extra target paths); writes one inside.
#include <fcntl.h>
#include <unistd.h>
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
static void try_create(const char* path) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::string what = std::string("create ") + path;
    if (fd >= 0) { write(fd, "pwned\n", 6); close(fd); }
    report(what.c_str(), fd >= 0);
}
int main(int argc, char** argv) {
    int t = read_turn();
    int fd = open("inside.txt", O_WRONLY | O_CREAT, 0600);
    std::fprintf(stderr, "scratch write: %s\n", fd >= 0 && write(fd, "ok", 2) == 2 ? "ok" : std::strerror(errno));
    try_create("../escaped.txt");
    try_create("/tmp/matchfarm-escaped.txt");
    try_create("/dev/shm/matchfarm-escaped.txt");
    for (int i = 1; i < argc; ++i) try_create(argv[i]);
    for (; t >= 0; t = read_turn()) answer(t);
}
