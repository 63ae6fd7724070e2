/* Instant proboj server for the runner benchmark: CONFIG args "rounds=N"; each round sends
 * TO PLAYER + READ PLAYER to every player, then reports the mean nanoseconds per round trip
 * (one TO + one READ) as every player's score. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static char line[1 << 16];

static int read_line(void) {
    if (!fgets(line, sizeof line, stdin)) exit(3);
    line[strcspn(line, "\n")] = 0;
    return strcmp(line, ".") != 0;
}

static void skip_message(void) { while (read_line()) {} }

int main(void) {
    char names[64][64];
    int n = 0, rounds = 1000;
    read_line(); /* CONFIG */
    read_line();
    for (char *t = strtok(line, " "); t && n < 64; t = strtok(NULL, " ")) snprintf(names[n++], 64, "%s", t);
    read_line();
    if (strncmp(line, "rounds=", 7) == 0) rounds = atoi(line + 7);
    skip_message();
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int r = 0; r < rounds; r++)
        for (int i = 0; i < n; i++) {
            printf("TO PLAYER %s\nx\n.\n", names[i]); fflush(stdout); skip_message();
            printf("READ PLAYER %s\n.\n", names[i]); fflush(stdout); skip_message();
        }
    clock_gettime(CLOCK_MONOTONIC, &b);
    long long ns = (b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec);
    long long per = ns / ((long long)rounds * (n ? n : 1));
    printf("SCORES\n");
    for (int i = 0; i < n; i++) printf("%s %lld\n", names[i], per);
    printf(".\n"); fflush(stdout); skip_message();
    printf("END\n.\n"); fflush(stdout);
    return 0;
}
