"""Answers every message with its line count and first line; notes each turn on stderr."""
import sys

turn = 0
lines = []
for line in sys.stdin:
    line = line.rstrip("\n")
    if line != ".":
        lines.append(line)
        continue
    turn += 1
    sys.stderr.write("turn %d\n" % turn)
    sys.stderr.flush()
    first = lines[0] if lines else ""
    sys.stdout.write("got %d lines\n%s\n.\n" % (len(lines), first))
    sys.stdout.flush()
    lines = []
