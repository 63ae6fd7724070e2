// Hostile bot: Looks for the worker (parent, grandparent, every pid in /proc) and reads its environ.
#include <dirent.h>
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
static void try_environ(int pid) {
    std::string path = "/proc/" + std::to_string(pid) + "/environ";
    int fd = open(path.c_str(), O_RDONLY);
    char buf[4096];
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (n > 0) {
        for (ssize_t i = 0; i < n; ++i) if (buf[i] == 0) buf[i] = ' ';
        buf[n] = 0;
    }
    report(("read " + path).c_str(), n > 0, n > 0 ? buf : "");
    if (fd >= 0) close(fd);
}
int main() {
    int t = read_turn();
    std::fprintf(stderr, "getppid = %d\n", (int)getppid());
    if (getppid() > 0) try_environ(getppid());
    try_environ(1);
    DIR* dir = opendir("/proc");
    report("list /proc", dir != nullptr);
    int seen = 0;
    if (dir) {
        while (dirent* e = readdir(dir)) {
            int pid = std::atoi(e->d_name);
            if (pid > 0 && pid != getpid()) { try_environ(pid); ++seen; }
        }
        closedir(dir);
    }
    std::fprintf(stderr, "other pids visible: %d\n", seen);
    for (; t >= 0; t = read_turn()) answer(t);
}
