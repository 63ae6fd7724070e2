"""Generate shared/tests/fixtures/schedule.json by running the reference make_schedule.

Usage: python3.11 tools/reference/gen_schedule.py [SEEDS_TOURNAMENT_DIR]
(default /work/shared/seeds/bomberman/tournament). Entrants are slot indices 0..n-1, so each
roster is already the slot list. Entries are stored compactly as [size, seed, slot, slot, ...].
"""
import json
import sys
from pathlib import Path

assert sys.version_info[:2] == (3, 11), 'fixtures must come from Python 3.11'
sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else '/work/shared/seeds/bomberman/tournament')
from evaluate import make_schedule  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / 'shared/tests/fixtures/schedule.json'
CASES = [
    (2, [2], 1, 0), (2, [2], 3, 1), (3, [2, 3], 2, 42), (3, [3, 2], 2, 42), (4, [2, 3, 4], 1, 7),
    (4, [4], 5, 2**32 - 1), (5, [2, 5], 3, 2**32), (5, [3], 6, 2**62 + 99), (6, [2, 4, 6], 2, 2**63 - 1),
    (6, [6, 2], 7, -5), (7, [2, 3, 7], 2, 123456789), (8, [5, 8], 1, 2**64 + 1), (8, [2, 3, 4], 22, 31337),
    (9, [9, 2], 3, 8059238412960493467), (10, [2, 5, 10], 3, 20240601), (10, list(range(2, 11)), 1, 1),
    (10, [10, 3], 2, -(2**63)), (3, [2], 40, 5), (2, [2], 200, 11),
]
ERRORS = [
    (1, [2], 1, 0), (3, [2], 0, 0), (3, [], 1, 0), (3, [2, 2], 1, 0), (3, [4], 1, 0), (12, [11], 1, 0),
    (3, [1], 1, 0), (3, [2], -1, 0),
]
out = dict(cases=[], errors=[])
for n, sizes, seeds, seed in CASES:
    entries = make_schedule(list(range(n)), sizes, seeds, seed)
    out['cases'].append(dict(entrants=n, sizes=sizes, seed_count=seeds, seed=str(seed),
                             entries=[[e['size'], e['seed'], *e['roster']] for e in entries]))
for n, sizes, seeds, seed in ERRORS:
    try:
        make_schedule(list(range(n)), sizes, seeds, seed)
        raise SystemExit(f'expected an error for {(n, sizes, seeds, seed)}')
    except ValueError as e:
        out['errors'].append(dict(entrants=n, sizes=sizes, seed_count=seeds, seed=str(seed), message=str(e)))
OUT.write_text(json.dumps(out, separators=(',', ':')) + '\n')
print(f'wrote {OUT}: {len(out["cases"])} cases, {sum(len(c["entries"]) for c in out["cases"])} entries')
