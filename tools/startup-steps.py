#!/usr/bin/env python3
"""Medians of the start-up and teardown steps a farm or the sandbox bench logged.

Reads the log lines of `FARM_LOG=matchfarm::startup=debug farm ...` or of the sandbox bench
run with `RUST_LOG=matchfarm::startup=debug` (sandbox::steps) from the files
named, or stdin, and prints each step's median and 90th percentile in µs, per kind of line
("start", "teardown"), with how many lines each figure rests on.

    RUST_LOG=matchfarm::startup=debug SANDBOX_BENCH_ONLY=full SANDBOX_BENCH_TURNS=0 \\
        cargo bench -p sandbox --bench sandbox 2> steps.log
    python3 tools/startup-steps.py steps.log
"""

import re
import statistics
import sys

LINE = re.compile(r"\b(start|teardown):((?: \w+=\d+)+)")


def quantile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main(paths):
    steps = {}  # kind -> step -> [µs]
    order = {}
    streams = [open(p, encoding="utf-8", errors="replace") for p in paths] or [sys.stdin]
    for stream in streams:
        for line in stream:
            m = LINE.search(line)
            if not m:
                continue
            kind = m.group(1)
            total = 0
            for pair in m.group(2).split():
                name, us = pair.split("=")
                if name == "total_us":
                    continue
                steps.setdefault(kind, {}).setdefault(name, []).append(int(us))
                order.setdefault(kind, [])
                if name not in order[kind]:
                    order[kind].append(name)
                total += int(us)
            steps[kind].setdefault("total", []).append(total)
    if not steps:
        sys.exit("no step lines found: run farm with FARM_LOG=matchfarm::startup=debug (the sandbox bench with RUST_LOG=...)")
    for kind in ("start", "teardown"):
        if kind not in steps:
            continue
        print(f"{kind} ({len(steps[kind]['total'])} lines): step, median µs, p90 µs")
        for name in order[kind] + ["total"]:
            v = steps[kind][name]
            print(f"  {name:<18} {statistics.median(v):>8.0f} {quantile(v, 0.9):>8}")


if __name__ == "__main__":
    main(sys.argv[1:])
