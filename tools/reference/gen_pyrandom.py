"""Generate shared/tests/fixtures/pyrandom.json from CPython's own random.Random (run with 3.11)."""
import json
import random
import struct
import sys
from pathlib import Path

assert sys.version_info[:2] == (3, 11), 'fixtures must come from Python 3.11'
OUT = Path(__file__).resolve().parents[2] / 'shared/tests/fixtures/pyrandom.json'
SEEDS = [0, 1, 2, 7, 42, 12345, -1, -42, 2**31 - 1, 2**32 - 1, 2**32, 2**32 + 1, 2**40 + 3,
         2**62, 2**62 + 12345, 2**63 - 1, -(2**63 - 1), 2**63, 2**64 - 1, 2**64, 2**100 + 7,
         9007199254740993, 8059238412960493467]
SAMPLES = [(1, 1), (5, 0), (5, 5), (10, 3), (21, 5), (22, 5), (27, 6), (28, 6), (64, 21),
           (100, 10), (1000, 7), (2**31 - 1, 1), (2**31 - 1, 3), (2**31 - 1, 5), (2**31 - 1, 40),
           (2**32 + 5, 4), (2**40, 3), (2**62 + 1, 2), (85, 22), (106, 22), (1000, 300), (85, 6), (86, 6), (277, 22), (278, 22), (1045, 100), (1046, 100), (2**31 - 1, 300)]


def bits(x):
    return struct.unpack('<Q', struct.pack('<d', x))[0]


cases = []
for seed in SEEDS:
    r = random.Random(seed)
    case = dict(seed=str(seed))
    case['u32'] = [r.getrandbits(32) for _ in range(8)]
    case['random_bits'] = [bits(r.random()) for _ in range(5)]
    case['getrandbits'] = [[k, str(r.getrandbits(k))] for k in (0, 1, 5, 31, 32, 33, 53, 63, 64)]
    case['randbelow'] = [[n, r._randbelow(n)] for n in (1, 2, 3, 7, 100, 2**31 - 1, 2**32, 2**32 + 1, 2**63 - 5)]
    case['samples'] = []
    for n, k in SAMPLES:
        r2 = random.Random(seed)
        case['samples'].append(dict(n=str(n), k=k, result=[str(x) for x in r2.sample(range(n), k)]))
    cases.append(case)
OUT.write_text(json.dumps(cases, indent=1) + '\n')
print(f'wrote {OUT} ({len(cases)} seeds)')
