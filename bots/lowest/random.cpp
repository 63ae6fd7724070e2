// Lowest unique, at random: a number 1 to 5 drawn from a hash (FNV-1a) of the line it reads,
// so the same game plays the same way on every host.
#include <cstdint>
#include <iostream>
#include <string>

int main() {
    std::string line;
    while (std::getline(std::cin, line)) {
        if (line.rfind("ROUND", 0) != 0) continue;
        std::uint64_t h = 0xcbf29ce484222325ULL;
        for (unsigned char c : line + "\n") {
            h ^= c;
            h *= 0x100000001b3ULL;
        }
        std::cout << h % 5 + 1 << std::endl;
    }
}
