"""Generate shared/tests/fixtures/report.json: result sets and the reference report() markdown.
Usage: python3.11 tools/reference/gen_report.py [SEEDS_TOURNAMENT_DIR]"""
import json
import sys
from pathlib import Path

assert sys.version_info[:2] == (3, 11), 'fixtures must come from Python 3.11'
sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else '/work/shared/seeds/bomberman/tournament')
sys.path.insert(0, str(Path(__file__).parent))
from evaluate import report  # noqa: E402
import synth  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / 'shared/tests/fixtures/report.json'
FORMAL = ['GPT-6 Astra', 'GPT-6 Sol', 'Opus 5.5', 'Kimi K3', 'GLM 5.3', 'DeepSeek V4.1 Flash', '豆包 Seed 2.1',
          'Qwen 3.8 Max', 'MiMo V2.6 Pro', 'Base']
P = [f'P{i}' for i in range(6)]
cases = [
    ('formal names, sizes 2 5 10', FORMAL, [2, 5, 10], 'Base', synth.rows(21, FORMAL, [2, 5, 10], 300, 0.05)),
    ('six players, sizes 3 2, integer-ish points', P, [3, 2], 'P0', synth.rows(22, P, [2, 3], 120, 0.1)),
    ('BT not yet available (size 4 has no games)', P, [2, 4], 'P1', synth.rows(23, P, [2], 30, 0.0)),
    ('no anchor', P[:4], [2, 3], None, synth.rows(24, P[:4], [2, 3], 40, 0.2)),
]
out = []
for title, roster, sizes, anchor, rows in cases:
    entrants = [(n, f'/bots/{i}') for i, n in enumerate(roster)]
    out.append(dict(title=title, roster=roster, sizes=sizes, anchor=anchor, rows=rows,
                    markdown=report(rows, entrants, sizes, anchor)))
OUT.write_text(json.dumps(out, ensure_ascii=False, separators=(',', ':')) + '\n', encoding='utf-8')
print(f'wrote {OUT}: {len(out)} cases')
