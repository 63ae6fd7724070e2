"""Write shared/benches/data/bt-8930.json: a synthetic 8,930-game, 10-player result set with
sizes 2..10 (compact rows [size, valid, names..., ranks...]) shared by the Rust bench and time_bt.py."""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import synth  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / 'shared/benches/data/bt-8930.json'
names = [f'Bot{i}' for i in range(9)] + ['Base']
rows = synth.rows(8930, names, list(range(2, 11)), 8930, 0.02)
OUT.write_text(json.dumps(dict(roster=names, sizes=list(range(2, 11)), anchor='Base', games=synth.compact(rows)),
                          separators=(',', ':')) + '\n')
print(f'wrote {OUT}')
