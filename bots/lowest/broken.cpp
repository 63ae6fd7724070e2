// Lowest unique, broken: answers 2 in the first two rounds, then 6 (out of range, a fault that
// takes it out of the game and ranks it last). A test of faults.
#include <iostream>
#include <string>

int main() {
    std::string line;
    int answered = 0;
    while (std::getline(std::cin, line))
        if (line.rfind("ROUND", 0) == 0) std::cout << (answered++ < 2 ? 2 : 6) << std::endl;
}
