"""Time the reference tournament loop's per-result bookkeeping (evaluate.py: rewrite the whole
results.json after every game, refresh the report every 25 games) at a given number of results,
on synthetic 10-player results like coordinator/benches/ingest.rs uses.

    python3 tools/reference/time_evaluate_checkpoint.py [/work/shared/seeds/bomberman/tournament]

Prints the cost of one checkpoint (and one report refresh) at 1k, 5k and 10k results, and the
whole 10k-result loop's bookkeeping time, integrated from those (the cost grows linearly with
the results so far, so the loop is quadratic).
"""
import json, os, sys, tempfile, time
from pathlib import Path

ref = Path(sys.argv[1] if len(sys.argv) > 1 else "/work/shared/seeds/bomberman/tournament")
sys.path.insert(0, str(ref))
import evaluate  # noqa: E402  (reference script, imported, not copied)

names = [f"bot{i}" for i in range(10)]
state = 0x9E3779B97F4A7C15


def nxt():
    global state
    state ^= (state << 13) & 0xFFFFFFFFFFFFFFFF
    state ^= state >> 7
    state ^= (state << 17) & 0xFFFFFFFFFFFFFFFF
    return state


def row(n):
    size = [2, 5, 10][n % 3]
    seats = list(range(10))
    for i in range(len(seats) - 1, 0, -1):
        j = nxt() % (i + 1)
        seats[i], seats[j] = seats[j], seats[i]
    seats = seats[:size]
    r = dict(version="v", seed=n, players=size, map_source="generated", names=[names[s] for s in seats],
             hashes={}, ranks=[1 + nxt() % size for _ in range(size)], points=[1.0] * size,
             points_exact=["1"] * size, survival_points=[1.0] * size, kill_points=[0.0] * size,
             kill_shares=["0"] * size, errors=[0] * size, death_turns=[-1] * size, turns=100,
             valid_for_scoring=True, bombs_placed=[3] * size, boxes_broken=[2] * size, faults=[[]] * size)
    return dict(match=n, size=size, result=r)


entrants = [(n, "x") for n in names]
out = Path(tempfile.mkdtemp())
rows = []
points = {}
for target in (1000, 5000, 10000):
    while len(rows) < target:
        rows.append(row(len(rows) + 1))
    t = time.perf_counter()
    temp = out / "results.tmp"
    temp.write_text(json.dumps(rows, ensure_ascii=False, indent=2), encoding="utf-8")
    temp.replace(out / "results.json")
    ck = time.perf_counter() - t
    t = time.perf_counter()
    (out / "report.md").write_text(evaluate.report(rows, entrants, [2, 5, 10], "bot0"), encoding="utf-8")
    rep = time.perf_counter() - t
    points[target] = (ck, rep)
    print(f"at {target} results: checkpoint {ck*1e3:.1f} ms, report {rep*1e3:.1f} ms")
# Per-result cost is linear in the results so far: integrate (checkpoint every game, report every 25).
ck10, rep10 = points[10000]
total = 10000 * (ck10 / 2) + (10000 / 25) * (rep10 / 2)
print(f"10k-result loop bookkeeping (integrated): {total:.0f} s, {10000/total:.1f} results/s")
