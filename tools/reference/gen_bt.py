"""Generate shared/tests/fixtures/bt.json: result sets and what the reference bt.fit returns
(or the ValueError it raises). Usage: python3.11 tools/reference/gen_bt.py [SEEDS_TOURNAMENT_DIR]"""
import json
import struct
import sys
from pathlib import Path

assert sys.version_info[:2] == (3, 11), 'fixtures must come from Python 3.11'
sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else '/work/shared/seeds/bomberman/tournament')
sys.path.insert(0, str(Path(__file__).parent))
from bt import fit  # noqa: E402
import synth  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / 'shared/tests/fixtures/bt.json'
FORMAL = ['GPT-6 Astra', 'GPT-6 Sol', 'Opus 5.5', 'Kimi K3', 'GLM 5.3', 'DeepSeek V4.1 Flash', '豆包 Seed 2.1',
          'Qwen 3.8 Max', 'MiMo V2.6 Pro', 'Base']


def row(size, names, ranks, valid=True):
    return dict(size=size, result=dict(valid_for_scoring=valid, names=names, ranks=ranks))


def chain(length, games):
    return [row(2, [f'C{k}', f'C{k + 1}'], [1, 2]) for k in range(length - 1) for _ in range(games)]


def strip(rows):
    return [dict(size=r['size'], result=dict(valid_for_scoring=r['result']['valid_for_scoring'],
                                              names=r['result']['names'], ranks=r['result']['ranks'])) for r in rows]


P = [f'P{i}' for i in range(10)]
cases = [
    ('six players, sizes 2-4, invalid games', P[:6], [2, 3, 4], 'P0', strip(synth.rows(11, P[:6], [2, 3, 4], 300, 0.05))),
    ('ten players, sizes 2-10', P, list(range(2, 11)), 'P3', strip(synth.rows(12, P, list(range(2, 11)), 900))),
    ('formal names (non-ASCII order), sizes 2,5,10', FORMAL, [2, 5, 10], 'Base', strip(synth.rows(13, FORMAL, [5, 2, 10], 450))),
    ('sizes listed out of order, extra size ignored', P[:5], [5, 3], 'P4', strip(synth.rows(14, P[:5], [3, 4, 5], 240, 0.1))),
    ('heavy draws', P[:4], [2, 4], 'P1', strip(synth.rows(15, P[:4], [2, 4], 200, 0.0, spread=0.0))
        + [row(2, ['P0', 'P1'], [1, 1]), row(4, ['P3', 'P2', 'P1', 'P0'], [1, 1, 1, 1])] * 5),
    ('one dominant player', P[:3], [2], 'P2', [row(2, ['P0', 'P1'], [1, 2])] * 30 + [row(2, ['P2', 'P1'], [1, 2])] * 3
        + [row(2, ['P1', 'P2'], [1, 1])]),
    ('slow convergence chain', [f'C{i}' for i in range(10)], [2], 'C0', chain(10, 50)),
    ('two players one game', ['A', 'B'], [2], 'B', [row(2, ['B', 'A'], [2, 1])]),
    ('roster order differs from first appearance', ['Z', 'M', 'A'], [3, 2], 'M',
        [row(3, ['A', 'Z', 'M'], [1, 2, 2]), row(2, ['M', 'A'], [1, 2]), row(2, ['Z', 'M'], [2, 1]), row(3, ['M', 'Z', 'A'], [3, 1, 2])]),
    # refusals
    ('anchor not a player', P[:3], [2], 'Base', [row(2, ['P0', 'P1'], [1, 2])]),
    ('a size without valid games', P[:3], [2, 3], 'P0', [row(2, ['P0', 'P1'], [1, 2]), row(3, ['P0', 'P1', 'P2'], [1, 2, 3], False)]),
    ('unknown player', P[:3], [2], 'P0', [row(2, ['P0', 'P1'], [1, 2]), row(2, ['P2', 'X'], [1, 2]), row(2, ['P1', 'P2'], [1, 2])]),
    ('not connected to the anchor', P[:4], [2], 'P0', [row(2, ['P0', 'P1'], [1, 2]), row(2, ['P2', 'P3'], [1, 2])]),
    ('no convergence', [f'C{i}' for i in range(12)], [2], 'C0', chain(12, 50)),
]


def bits(x):
    return struct.unpack('<Q', struct.pack('<d', x))[0]


out = []
for title, roster, sizes, anchor, rows in cases:
    case = dict(title=title, roster=roster, sizes=sizes, anchor=anchor, rows=rows)
    try:
        r = fit(rows, roster, sizes, anchor)
        case['expect'] = dict(ratings=r['ratings'], rating_bits={k: bits(v) for k, v in r['ratings'].items()},
                              valid_games_by_size=r['valid_games_by_size'], iterations=r['iterations'],
                              bt_json=json.dumps(r, ensure_ascii=False, indent=2))
    except ValueError as e:
        case['error'] = str(e)
    out.append(case)
OUT.write_text(json.dumps(out, ensure_ascii=False, separators=(',', ':')) + '\n', encoding='utf-8')
print(f'wrote {OUT}: {len(out)} cases')
