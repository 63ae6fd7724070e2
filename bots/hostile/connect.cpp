// Hostile bot: Tries TCP connections to 127.0.0.1:5672, :6379 and argv ports, and a UDP packet.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
// --- shared by every hostile bot (each file stays a single self-contained source) ---
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

static int g_counter = 0;
// Reads one turn's input (until a line END); returns its turn number, -1 at end of input.
static int read_turn() {
    std::string line;
    int t = -1;
    while (std::getline(std::cin, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.rfind("TURN ", 0) == 0) t = std::atoi(line.c_str() + 5);
        if (line == "END") {
            if (t < 0) t = g_counter;
            ++g_counter;
            return t;
        }
    }
    return -1;
}
static void answer(int t) { std::cout << t << " S 0" << std::endl; }
// One line per attempt on stderr: "ATTACK <what>: blocked (<errno>)" or "ATTACK <what>: SUCCEEDED ...".
static void report(const char* what, bool ok, const char* extra = "") {
    if (ok) std::fprintf(stderr, "ATTACK %s: SUCCEEDED %s\n", what, extra);
    else std::fprintf(stderr, "ATTACK %s: blocked (%s)\n", what, std::strerror(errno));
    std::fflush(stderr);
}
// ---
static void try_connect(int port) {
    std::string what = "connect 127.0.0.1:" + std::to_string(port);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0) { report(what.c_str(), false); return; }
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bool ok = connect(s, (sockaddr*)&a, sizeof a) == 0;
    report(what.c_str(), ok);
    close(s);
}
int main(int argc, char** argv) {
    int t = read_turn();
    try_connect(5672);
    try_connect(6379);
    for (int i = 1; i < argc; ++i) try_connect(std::atoi(argv[i]));
    int u = socket(AF_INET, SOCK_DGRAM, 0);
    report("udp socket", u >= 0);
    int v6 = socket(AF_INET6, SOCK_STREAM, 0);
    report("inet6 socket", v6 >= 0);
    int nl = socket(AF_NETLINK, SOCK_RAW, 0);
    report("netlink socket", nl >= 0);
    int sv[2];
    std::fprintf(stderr, "unix socketpair: %s\n", socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0 ? "ok" : "refused");
    for (; t >= 0; t = read_turn()) answer(t);
}
