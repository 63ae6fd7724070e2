#!/usr/bin/env python3
"""Plays a series of `farm play` matches and prints mean points, mean rank and faults per bot.

Seats rotate by one place per seed so every bot plays from every spawn.
Usage (from the repository root):
  python3 bots/bomberman/tools/farm_measure.py --farm path/to/farm --seeds 1 20 \
      Search=bots/bomberman/search.cpp Base=bots/bomberman/baseline.cpp
"""
import argparse
import json
import subprocess
import sys
from fractions import Fraction


def turn_entries(bot_timing):
    """A bot's per-turn timing from a replay as dicts, in either form: a list of objects, or
    the value lists under column names the farm writes (games::bomberman::replay::turn_timing)."""
    per_turn = bot_timing.get("per_turn", [])
    if isinstance(per_turn, list):
        return per_turn
    columns = per_turn.get("columns", [])
    out = []
    for row in per_turn.get("rows", []):
        entry = dict(zip(columns, row))
        if len(row) > len(columns) and isinstance(row[len(columns)], dict):
            entry.update(row[len(columns)])
        out.append(entry)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--farm", default="farm")
    ap.add_argument("--seeds", nargs=2, type=int, default=[1, 20])
    ap.add_argument("--cache-dir", default=None)
    ap.add_argument("--out", default="/tmp/farm_measure")
    ap.add_argument("bots", nargs="+")
    a = ap.parse_args()
    names = [b.split("=", 1)[0] for b in a.bots]
    pts = {n: [] for n in names}
    rank = {n: [] for n in names}
    faults = {n: 0 for n in names}
    max_cpu = {n: 0 for n in names}
    max_wall = {n: 0 for n in names}
    misses = {n: 0 for n in names}
    for seed in range(a.seeds[0], a.seeds[1] + 1):
        k = seed % len(a.bots)
        seat = a.bots[k:] + a.bots[:k]
        cmd = [a.farm, "play", "--seed", str(seed), "--replay", f"{a.out}-{seed}.html", "--bots", *seat]
        if a.cache_dir:
            cmd += ["--cache-dir", a.cache_dir]
        res = subprocess.run(cmd, capture_output=True, text=True)
        lines = res.stdout.splitlines()
        head = next((i for i, l in enumerate(lines) if l.startswith("name")), None)
        if head is None:
            print(f"seed {seed}: no result table\n{res.stdout}\n{res.stderr}", file=sys.stderr)
            continue
        row_texts = []
        for l in lines[head + 1:head + 1 + len(seat)]:
            f = l.split()
            n, r, p, flt = f[0], int(f[1]), Fraction(f[2]), f[-1]
            pts[n].append(p)
            rank[n].append(r)
            if flt != "-":
                faults[n] += 1
            row_texts.append(f"{n}:{p}")
        try:
            with open(f"{a.out}-{seed}.json") as fh:
                timing = json.load(fh)["result"].get("timing") or {}
            for i, n in enumerate(b.split("=", 1)[0] for b in seat):
                t = timing.get(f"bot_{i}") or {}
                misses[n] += t.get("deadline_misses", 0)
                max_wall[n] = max(max_wall[n], t.get("max_wall_us", 0))
                for pt in turn_entries(t):
                    if pt.get("turn", 0) > 0:
                        max_cpu[n] = max(max_cpu[n], pt.get("cpu_us", 0))
        except (OSError, ValueError, KeyError) as e:
            print(f"seed {seed}: no timing ({e})", file=sys.stderr)
        print(f"seed {seed} {lines[0].split('turns')[-1].strip()} turns: " + " ".join(row_texts), flush=True)
    print(f"{'bot':<10} {'games':>5} {'meanPts':>8} {'meanRank':>8} {'faults':>6} {'misses':>6} {'maxCpuMs':>8} {'maxWallMs':>9}")
    for n in names:
        g = len(pts[n])
        mp = float(sum(pts[n]) / g) if g else 0.0
        mr = sum(rank[n]) / g if g else 0.0
        print(f"{n:<10} {g:>5} {mp:>8.3f} {mr:>8.3f} {faults[n]:>6} {misses[n]:>6} "
              f"{max_cpu[n] / 1000:>8.2f} {max_wall[n] / 1000:>9.2f}")


if __name__ == "__main__":
    main()
