// Lowest unique, the simplest bot: always answers 1 (it scores whenever nobody else says 1).
#include <iostream>
#include <string>

int main() {
    std::string line;
    while (std::getline(std::cin, line))
        if (line.rfind("ROUND", 0) == 0) std::cout << 1 << std::endl;
}
