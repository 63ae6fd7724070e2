// Hostile bot: Tries to read another bot's program (argv paths) and to find others next to its own folder.
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
static void try_read(const std::string& path) {
    int fd = open(path.c_str(), O_RDONLY);
    char buf[64];
    bool ok = fd >= 0 && read(fd, buf, sizeof buf) > 0;
    report(("read " + path).c_str(), ok);
    if (fd >= 0) close(fd);
}
int main(int argc, char** argv) {
    int t = read_turn();
    for (int i = 1; i < argc; ++i) try_read(argv[i]);
    for (const char* d : {"..", "../..", "/tmp", "/work", "/root"}) {
        DIR* dir = opendir(d);
        report((std::string("list ") + d).c_str(), dir != nullptr);
        if (!dir) continue;
        while (dirent* e = readdir(dir)) {
            std::string name = e->d_name;
            if (name == "." || name == "..") continue;
            try_read(std::string(d) + "/" + name + "/bin/answer");
        }
        closedir(dir);
    }
    for (; t >= 0; t = read_turn()) answer(t);
}
