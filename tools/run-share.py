#!/usr/bin/env python3
"""What a finished `farm run` gave its bots (issue 26, item 4, and the README's tournament).

Reads the run folder's results.jsonl (each row's per-bot `timing.cpu_us`: CPU the bots used in
their turns) and the `/usr/bin/time -v` output of the command that made it, and prints the
figures BENCHMARKS.md records: matches, bot-turns, wall time, bot CPU, the share of the machine
the bots got (bot CPU / (cores x wall)), the command's peak memory (max RSS) and the folder's
bytes per match.

    /usr/bin/time -v farm run ... --output OUT 2> OUT.time
    tools/run-share.py OUT OUT.time [--cores N]
"""

import argparse
import json
import os
import re
import sys


def time_fields(path):
    """Wall seconds, max RSS (kB), user and system CPU seconds from `/usr/bin/time -v` output."""
    text = open(path, encoding="utf-8", errors="replace").read()

    def field(label):
        m = re.search(r"^\s*" + re.escape(label) + r":\s*(.+)$", text, re.M)
        if not m:
            sys.exit(f"{path}: no '{label}' line (is it /usr/bin/time -v output?)")
        return m.group(1).strip()

    parts = [float(p) for p in field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":")]
    wall = 0.0
    for p in parts:
        wall = wall * 60 + p
    return (
        wall,
        int(field("Maximum resident set size (kbytes)")),
        float(field("User time (seconds)")),
        float(field("System time (seconds)")),
    )


def folder_bytes(path):
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_size
            except OSError:
                pass
    return total


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", help="the run's output folder")
    ap.add_argument("time", help="the /usr/bin/time -v output of the run's command")
    ap.add_argument("--cores", type=int, default=os.cpu_count(), help="cores of the machine (default: this one's)")
    a = ap.parse_args()

    matches = turns = 0
    cpu_us = 0
    with open(os.path.join(a.out, "results.jsonl"), encoding="utf-8") as f:
        for line in f:
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            timing = (row.get("result") or {}).get("timing") or {}
            if not timing:
                continue
            matches += 1
            for bot in timing.values():
                cpu_us += int(bot.get("cpu_us", 0))
                turns += int(bot.get("turns", 0))
    if matches == 0:
        sys.exit(f"{a.out}/results.jsonl: no row with per-bot timing")
    wall, rss_kb, user, system = time_fields(a.time)
    size = folder_bytes(a.out)
    bot_s = cpu_us / 1e6
    print(f"matches               {matches}")
    print(f"bot-turns             {turns}")
    print(f"wall                  {wall:.1f} s")
    print(f"command CPU           {user:.1f} s user + {system:.1f} s system")
    print(f"bot CPU (in turns)    {bot_s:.1f} s")
    print(f"bots' share           {100 * bot_s / (a.cores * wall):.1f} % of {a.cores} cores")
    print(f"peak memory (max RSS) {rss_kb / 1024:.0f} MB")
    print(f"folder                {size / 1e6:.1f} MB = {size / matches:,.0f} bytes per match")


if __name__ == "__main__":
    main()
