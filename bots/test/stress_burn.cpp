// Stress benchmark (issue 21), CPU-hungry kind: burns 30 ms of its own thread CPU per turn
// (60% of the 50 ms limit, as the bots of issue 21's first case), then answers `t S 0`.
#include <time.h>
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
    while (std::getline(std::cin, line)) {
        if (line.rfind("TURN ", 0) == 0) t = std::atoi(line.c_str() + 5);
        if (line != "END") continue;
        if (t < 0) t = counter;
        ++counter;
        long long start = thread_cpu_us();
        volatile unsigned long x = 0;
        while (thread_cpu_us() - start < budget_us) x = x + 1;
        std::cout << t << " S 0" << std::endl;
        t = -1;
    }
}
