#!/usr/bin/env python3
"""Stress benchmark (issue 21) proboj player: answers every message with 1.

--kind sleep (a few µs of work + 3 ms sleep per message), burn (25 ms of thread CPU per
message), think (150 ms of busy wall time per message, as player.py --mode think) or ponder
(8 ms on the main thread, then a helper thread burns at most 8 ms more after each answer).
"""
import sys
import threading
import time

kind = sys.argv[sys.argv.index("--kind") + 1] if "--kind" in sys.argv else "sleep"


def burn_cpu(seconds):
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


wake = threading.Event()


def helper():
    while True:
        wake.wait()
        wake.clear()
        burn_cpu(0.008)


if kind == "ponder":
    threading.Thread(target=helper, daemon=True).start()

while True:
    while True:
        line = sys.stdin.readline()
        if line == "":
            sys.exit(0)
        if line.rstrip("\n") == ".":
            break
    if kind == "sleep":
        time.sleep(0.003)
    elif kind == "burn":
        burn_cpu(0.025)
    elif kind == "think":
        start = time.monotonic()
        while time.monotonic() - start < 0.150:
            pass
    elif kind == "ponder":
        burn_cpu(0.008)
    sys.stdout.write("1\n.\n")
    sys.stdout.flush()
    if kind == "ponder":
        wake.set()
