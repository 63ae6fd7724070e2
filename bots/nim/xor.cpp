// Nim, played perfectly: move to a position whose heaps XOR to zero when it can, else take one
// from the largest heap. Reads `HEAPS h1 h2 ...` lines, answers `HEAP COUNT`.
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

int main() {
    std::string line;
    while (std::getline(std::cin, line)) {
        std::istringstream in(line);
        std::string word;
        in >> word;
        if (word != "HEAPS") continue;
        std::vector<unsigned> h;
        for (unsigned x; in >> x;) h.push_back(x);
        unsigned x = 0;
        for (unsigned v : h) x ^= v;
        size_t heap = 0;
        unsigned take = 0;
        for (size_t i = 0; i < h.size() && x != 0; ++i) {
            unsigned target = h[i] ^ x;
            if (target < h[i]) {
                heap = i;
                take = h[i] - target;
                break;
            }
        }
        if (take == 0) {
            for (size_t i = 0; i < h.size(); ++i)
                if (h[i] > h[heap]) heap = i;
            take = 1;
        }
        std::cout << heap << " " << take << std::endl;
    }
}
