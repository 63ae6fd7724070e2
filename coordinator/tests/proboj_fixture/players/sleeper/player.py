"""Reads one message and never answers (its language's timeout is short): the runner kills it
on the read timeout."""
import sys
import time

for line in sys.stdin:
    if line.rstrip("\n") == ".":
        break
sys.stderr.write("sleeping\n")
sys.stderr.flush()
time.sleep(60)
