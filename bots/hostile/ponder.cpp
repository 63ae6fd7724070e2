// Hostile bot: Answers at once and keeps computing between turns in a thread and a forked child (setsid/setpgid tried); reports the work done between its answer and the next input.
#include <sys/mman.h>
#include <poll.h>
#include <atomic>
#include <thread>
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
int main() {
    auto* shared = (std::atomic<unsigned long>*)mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    new (shared) std::atomic<unsigned long>(0);
    if (fork() == 0) {
        report("child setsid", setsid() >= 0);
        report("child setpgid", setpgid(0, 0) == 0);
        for (;;) shared->fetch_add(1, std::memory_order_relaxed);
    }
    std::thread helper([&] { for (;;) shared->fetch_add(1, std::memory_order_relaxed); });
    helper.detach();
    unsigned long at_answer = 0;
    for (int t; (t = read_turn()) >= 0;) {
        unsigned long now = shared->load();
        if (t > 0) std::fprintf(stderr, "ponder_work %lu\n", now - at_answer);
        std::fflush(stderr);
        answer(t);
        at_answer = shared->load();
    }
}
