/* Baseline for the benchmark: the same exchange (server writes a command, reads a one-line
 * answer) between two processes connected directly by pipes, no runner in between. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 100000;
    int to_child[2], to_parent[2];
    if (pipe(to_child) || pipe(to_parent)) return 1;
    if (fork() == 0) {
        char buf[256];
        /* Keep only our ends, so the parent closing its write end ends us. */
        close(to_child[1]);
        close(to_parent[0]);
        for (;;) { if (read(to_child[0], buf, sizeof buf) <= 0) _exit(0); write(to_parent[1], "OK\n.\n", 5); }
    }
    close(to_child[0]);
    close(to_parent[1]);
    char buf[256];
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < rounds; i++) { write(to_child[1], "READ PLAYER a\n.\n", 16); read(to_parent[0], buf, sizeof buf); }
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%lld ns per direct exchange\n", ((b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec)) / rounds);
    close(to_child[1]);
    wait(NULL);
    return 0;
}
