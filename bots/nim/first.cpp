// Nim, played naively: take one from the first heap that is not empty.
#include <iostream>
#include <sstream>
#include <string>

int main() {
    std::string line;
    while (std::getline(std::cin, line)) {
        std::istringstream in(line);
        std::string word;
        in >> word;
        if (word != "HEAPS") continue;
        size_t i = 0;
        for (unsigned x; in >> x; ++i)
            if (x > 0) break;
        std::cout << i << " 1" << std::endl;
    }
}
