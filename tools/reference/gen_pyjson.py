"""Generate shared/tests/fixtures/pyjson.json: Python's float repr for many floats (given as
IEEE bits) and json.dumps(indent=2) texts of a sample document, ASCII and not."""
import json
import random
import struct
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / 'shared/tests/fixtures/pyjson.json'
rng = random.Random(5)
floats = [0.0, -0.0, 1.0, -1.0, 0.1, 0.5, 1e-4, 1e-5, 1.5e-5, 9.999e-5, 1e15, 1e16, 1.5e16, 9999999999999998.0,
          123456789012345680.0, 3.2e-9, 0.1 + 0.2, 1e300, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308,
          495.722298307673, -236.77773056798776, 400 / 2.302585092994046, 2.0 ** 53, 2.0 ** 60, 1 / 3]
floats += [rng.uniform(-1000, 1000) for _ in range(200)]
floats += [rng.uniform(0, 1) * 10.0 ** rng.randint(-30, 30) for _ in range(200)]
floats += [rng.randrange(2**40, 2**52) / 8 for _ in range(500)]
raw = [rng.getrandbits(64) for _ in range(3000)]
floats += [x for x in (struct.unpack('<d', struct.pack('<Q', b))[0] for b in raw) if x == x and abs(x) != float('inf')]
bits = [struct.unpack('<Q', struct.pack('<d', x))[0] for x in floats]
doc = {'anchor': 'Base', 'ratings': {'豆包 Seed 2.1': 12.5, 'Base': 0.0, 'x"y\\z': -3.25},
       'nested': [[], {}, [1, 2, {'a': None, 'b': True, 'c': False}], 'tab\there\nnew\x01\x7f\u2028😀'],
       'ints': [0, -5, 2**63 - 1], 'small': 1e-05, 'big': 1e16}
OUT.write_text(json.dumps(dict(bits=bits, reprs=[repr(x) for x in floats], doc=json.dumps(doc),
                               text=json.dumps(doc, ensure_ascii=False, indent=2),
                               text_ascii=json.dumps(doc, indent=2)), ensure_ascii=False) + '\n', encoding='utf-8')
print('wrote', OUT)
