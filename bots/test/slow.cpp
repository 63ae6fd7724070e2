// The slow answerer: sleeps (not CPU) a fixed time on every turn, then answers `t S 0`: a long
// match that never misses a deadline (argument: milliseconds per turn, default 500).
#include <chrono>
#include <thread>
// --- shared by every test bot (each file stays a single self-contained source) ---
#include <cstdlib>
#include <iostream>
#include <string>

inline int g_counter = 0;

// Returns the turn number, or -1 at end of input.
inline int read_turn() {
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

inline void answer(int t) { std::cout << t << " S 0" << std::endl; }

inline int bad_turn(int argc, char** argv) { return argc > 1 ? std::atoi(argv[1]) : 1; }
// ---
int main(int argc, char** argv) {
    int ms = argc > 1 ? std::atoi(argv[1]) : 500;
    for (int t; (t = read_turn()) >= 0;) {
        std::this_thread::sleep_for(std::chrono::milliseconds(ms));
        answer(t);
    }
}
