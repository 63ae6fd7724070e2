"""Time the reference bt.fit (and report()) on the benchmark data, for side-by-side ratios with
`cargo bench -p shared --bench bt`. Usage:
  python3.11 tools/reference/time_bt.py [SEEDS_TOURNAMENT_DIR]
Prints the median of several runs, in milliseconds."""
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else '/work/shared/seeds/bomberman/tournament')
sys.path.insert(0, str(Path(__file__).parent))
from bt import fit  # noqa: E402
from evaluate import report  # noqa: E402
import synth  # noqa: E402

data = json.loads((Path(__file__).resolve().parents[2] / 'shared/benches/data/bt-8930.json').read_text())
rows = synth.expand(data['games'])
names, sizes, anchor = data['roster'], data['sizes'], data['anchor']


def timed(fn, runs):
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return f'{min(out) * 1e3:.3f} ms min / {statistics.median(out) * 1e3:.3f} ms median'


r = fit(rows, names, sizes, anchor)
print(f'bt.fit 8930 games: {timed(lambda: fit(rows, names, sizes, anchor), 15)} '
      f'({r["iterations"]} iterations; Bot0 {r["ratings"]["Bot0"]:.12f})')
# report() reads per-seat points; give every seat zeros so it runs (BT section included).
full = [dict(row, result=dict(row['result'], survival_points=[0.0] * row['size'], kill_points=[0.0] * row['size'],
                              points=[0.0] * row['size'], errors=[0] * row['size'])) for row in rows]
entrants = [(n, '') for n in names]
print(f'report() incl. BT at 8930 games: {timed(lambda: report(full, entrants, sizes, anchor), 7)}')

# The reference keeps no rating state: refreshing ratings after one more result means a full
# fit over all rows so far, and the live report (every --report-every games) reruns report().
rows10k = synth.rows(10_000, names, sizes, 10_000, 0.02)
print(f'bt.fit at 10,000 results (one refresh): {timed(lambda: fit(rows10k, names, sizes, anchor), 7)}')
print(f'report() incl. BT at 10,000 results: {timed(lambda: report(rows10k, entrants, sizes, anchor), 5)}')
