// Stress benchmark (issue 21), pondering kind: the main thread burns 8 ms of thread CPU per turn;
// after each answer a helper thread ponders for at most 8 ms of its own CPU, then sleeps until
// the next answer. Main + helper stay at 16 ms per turn, well under the 50 ms limit.
#include <time.h>
#include <condition_variable>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>

static long long thread_cpu_us() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

static void burn(long long us) {
    long long start = thread_cpu_us();
    volatile unsigned long x = 0;
    while (thread_cpu_us() - start < us) x = x + 1;
}

int main() {
    std::mutex m;
    std::condition_variable cv;
    unsigned long answered = 0;
    std::thread([&] {
        unsigned long seen = 0;
        for (;;) {
            {
                std::unique_lock<std::mutex> lock(m);
                cv.wait(lock, [&] { return answered != seen; });
                seen = answered;
            }
            burn(8000);
        }
    }).detach();
    std::string line;
    int t = -1, counter = 0;
    while (std::getline(std::cin, line)) {
        if (line.rfind("TURN ", 0) == 0) t = std::atoi(line.c_str() + 5);
        if (line != "END") continue;
        if (t < 0) t = counter;
        ++counter;
        burn(8000);
        std::cout << t << " S 0" << std::endl;
        t = -1;
        {
            std::lock_guard<std::mutex> lock(m);
            ++answered;
        }
        cv.notify_one();
    }
}
