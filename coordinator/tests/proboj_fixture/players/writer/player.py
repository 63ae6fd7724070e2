"""Keeps state in its own folder (as real bots save state or checkpoints there): on every
message it appends a line to `state.txt` beside this script, and answers how many lines the
file held before (0, 1, ... while the folder is its own for the game)."""
import os
import sys

state = os.path.join(os.path.dirname(os.path.abspath(__file__)), "state.txt")
for line in sys.stdin:
    if line.rstrip("\n") != ".":
        continue
    try:
        with open(state) as f:
            before = len(f.read().splitlines())
    except FileNotFoundError:
        before = 0
    with open(state, "a") as f:
        f.write("line\n")
    sys.stderr.write("state held %d lines\n" % before)
    sys.stderr.flush()
    sys.stdout.write("seen %d\n.\n" % before)
    sys.stdout.flush()
