// Prints an answer before it has been asked anything (right at start-up), then plays normally.
#include <cstdio>
int main() {
    std::printf("0 S 0\n");
    std::fflush(stdout);
    char line[4096];
    int turn = 0;
    while (std::fgets(line, sizeof line, stdin)) {
        if (line[0] == 'E' && line[1] == 'N' && line[2] == 'D') {
            std::printf("%d S 0\n", turn++);
            std::fflush(stdout);
        }
    }
}
