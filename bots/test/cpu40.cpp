// The fairness benchmark's bot: burns ~40 ms of its own CPU time per turn, then answers.
// With the argument `ponder` a background thread computes while the bot waits for its next
// turn (and rests while the bot thinks on its turn), as game bots that think ahead do.
#include <time.h>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <atomic>
#include <chrono>
#include <thread>

static long long thread_cpu_us() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

int main(int argc, char** argv) {
    static std::atomic<bool> thinking{false};
    if (argc > 1 && std::strcmp(argv[1], "ponder") == 0) {
        std::thread([] {
            for (volatile unsigned long i = 0;; i = i + 1u)
                while (thinking.load(std::memory_order_relaxed))
                    std::this_thread::sleep_for(std::chrono::microseconds(200));
        }).detach();
    }
    long long budget_us = argc > 2 ? std::atoll(argv[2]) : 40000;
    std::string line;
    int t = -1, counter = 0;
    while (std::getline(std::cin, line)) {
        if (line.rfind("TURN ", 0) == 0) t = std::atoi(line.c_str() + 5);
        if (line != "END") continue;
        if (t < 0) t = counter;
        ++counter;
        thinking = true;
        long long start = thread_cpu_us();
        volatile unsigned long x = 0;
        while (thread_cpu_us() - start < budget_us) x = x + 1;
        thinking = false;
        std::cout << t << " S 0" << std::endl;
        t = -1;
    }
}
