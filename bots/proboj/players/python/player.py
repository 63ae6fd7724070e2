#!/usr/bin/env python3
"""Example proboj player: answers every `ROUND r` message with value*r (strategy.py beside it).

Options: --value N (default 1); --mode normal|slow|flood|fork|crash to misbehave for tests;
--mode think computes for 150 ms per message and logs when (monotonic ns) on stderr.
"""
import os
import sys
import time

from strategy import answer

value, mode = 1, "normal"
argv = sys.argv[1:]
while argv:
    if argv[0] == "--value":
        value = int(argv[1])
    elif argv[0] == "--mode":
        mode = argv[1]
    argv = argv[2:]

if mode == "fork":
    if os.fork() == 0:
        os.setsid()
        time.sleep(1000)
        os._exit(0)

while True:
    lines = []
    while True:
        line = sys.stdin.readline()
        if line == "":
            sys.exit(0)
        line = line.rstrip("\n")
        if line == ".":
            break
        lines.append(line)
    r = int(lines[0].split()[1])
    print("got", lines[0], file=sys.stderr, flush=True)
    if mode == "think":
        start = time.monotonic_ns()
        while time.monotonic_ns() - start < 150_000_000:
            pass
        print("think", start, time.monotonic_ns(), file=sys.stderr, flush=True)
    if mode == "slow":
        time.sleep(1000)
    if mode == "crash" and r == 2:
        sys.exit(7)
    if mode == "flood":
        chunk = "x" * 65536
        for _ in range(40):
            sys.stderr.write(chunk)
        sys.stderr.flush()
    sys.stdout.write("%d\n.\n" % answer(value, r))
    sys.stdout.flush()
