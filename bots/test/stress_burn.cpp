// Stress benchmark (issue 21), CPU-hungry kind: burns 30 ms of its own thread CPU per turn
// (60% of the 50 ms limit, as the bots of issue 21's first case), then answers `t S 0`.
//
// It also checks its own clock, so that a turn the farm charges more CPU than the burn explains
// itself: when its thread CPU between its last answer and this turn's first input line, or
// while parsing the input, or in the burn, or in one step of the burn loop, is more than the
// burn accounts for, it writes one `cpu-anomaly` line to stderr (the replay keeps its head and
// tail) with those four figures in µs.
#include <time.h>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

static long long thread_cpu_us() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

int main() {
    const long long budget_us = 30000;
    std::string line;
    int t = -1, counter = 0;
    long long answered = thread_cpu_us(), first = -1;
    while (std::getline(std::cin, line)) {
        if (first < 0) first = thread_cpu_us();
        if (line.rfind("TURN ", 0) == 0) t = std::atoi(line.c_str() + 5);
        if (line != "END") continue;
        if (t < 0) t = counter;
        ++counter;
        long long start = thread_cpu_us(), now = start, step = 0;
        volatile unsigned long x = 0;
        while (now - start < budget_us) {
            x = x + 1;
            long long next = thread_cpu_us();
            if (next - now > step) step = next - now;
            now = next;
        }
        long long before = first - answered, parse = start - first, burn = now - start;
        if (before > 2000 || parse > 2000 || burn > budget_us + 2000 || step > 2000)
            std::fprintf(stderr, "cpu-anomaly turn=%d before_us=%lld parse_us=%lld burn_us=%lld step_us=%lld\n",
                         t, before, parse, burn, step);
        std::cout << t << " S 0" << std::endl;
        answered = thread_cpu_us();
        first = -1;
        t = -1;
    }
}
