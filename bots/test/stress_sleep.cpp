// Stress benchmark (issue 21), sleeping kind: a few microseconds of work and usleep(3000) per
// turn, then `t S 0`. Its own demand is far under any limit: a timeout of it is the farm's fault.
#include <unistd.h>
#include <cstdlib>
#include <iostream>
#include <string>

int main() {
    std::string line;
    int t = -1, counter = 0;
    while (std::getline(std::cin, line)) {
        if (line.rfind("TURN ", 0) == 0) t = std::atoi(line.c_str() + 5);
        if (line != "END") continue;
        if (t < 0) t = counter;
        ++counter;
        volatile unsigned x = 0;
        for (unsigned i = 0; i < 1000; ++i) x = x + i;
        usleep(3000);
        std::cout << t << " S 0" << std::endl;
        t = -1;
    }
}
