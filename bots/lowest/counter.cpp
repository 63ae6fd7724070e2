// Lowest unique, by best response: expects every other seat to repeat its last answer (1 in the
// first round, and for a seat that is out) and picks the number that leaves the fewest seats
// ahead of it, then the fewest level with it, then hands the point to the leader, then the
// highest number. Reads `ROUND r OF n SEAT s SCORES a b c LAST x y z`.
#include <iostream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

// The seat whose number is the lowest chosen by exactly one seat, or -1.
int winner(const std::vector<int>& a) {
    for (int n = 1; n <= 5; ++n) {
        int count = 0, who = -1;
        for (size_t i = 0; i < a.size(); ++i)
            if (a[i] == n) ++count, who = static_cast<int>(i);
        if (count == 1) return who;
    }
    return -1;
}

int main() {
    std::string line;
    while (std::getline(std::cin, line)) {
        std::istringstream in(line);
        std::string w;
        int round, rounds, seat;
        in >> w;
        if (w != "ROUND") continue;
        in >> round >> w >> rounds >> w >> seat >> w;
        std::vector<int> scores(3), last(3);
        for (int& s : scores) in >> s;
        in >> w;
        for (int& x : last) in >> x;
        std::tuple<int, int, int, int> best{-9, -9, -9, 0};
        for (int n = 1; n <= 5; ++n) {
            std::vector<int> a(3), s = scores;
            for (int i = 0; i < 3; ++i) a[i] = i == seat ? n : (last[i] ? last[i] : 1);
            int win = winner(a);
            if (win >= 0) ++s[win];
            int ahead = 0, level = 0;
            for (int i = 0; i < 3; ++i) {
                if (i == seat) continue;
                ahead += s[i] > s[seat];
                level += s[i] == s[seat];
            }
            int leader = win >= 0 && win != seat ? scores[win] : -1;
            std::tuple<int, int, int, int> u{-ahead, -level, leader, n};
            if (u > best) best = u;
        }
        std::cout << std::get<3>(best) << std::endl;
    }
}
