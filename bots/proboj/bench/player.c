/* Instant proboj player for the runner benchmark: answers every message with "1". */
#include <stdio.h>
#include <string.h>

int main(void) {
    char line[1 << 16];
    while (fgets(line, sizeof line, stdin)) {
        if (strcmp(line, ".\n") == 0) { fputs("1\n.\n", stdout); fflush(stdout); }
    }
    return 0;
}
