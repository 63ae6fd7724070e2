// Nim, cheating: always takes 99 from heap 0 (an illegal move, so it loses on its first turn).
#include <iostream>
#include <string>

int main() {
    std::string line;
    while (std::getline(std::cin, line))
        if (line.rfind("HEAPS", 0) == 0) std::cout << "0 99" << std::endl;
}
