"""Reads one message, then closes its stdin and then its stdout (in that order, so a runner
that sees its stdout end finds its stdin closed too) but stays alive for 1.5 s: READs
meanwhile find its stdout ended (the process still runs), a write finds its stdin closed;
then it exits 0."""
import os
import sys
import time

for line in sys.stdin:
    if line.rstrip("\n") == ".":
        break
sys.stderr.write("closing\n")
sys.stderr.flush()
os.close(0)
os.close(1)
time.sleep(1.5)
