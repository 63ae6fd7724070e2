"""Generate shared/tests/fixtures/identity.json and schedule-file.json: how the reference
writes identity.json / schedule.json (json.dumps, ensure_ascii=False, indent=2) for a small
made-up run. Usage: python3.11 tools/reference/gen_identity.py [SEEDS_TOURNAMENT_DIR]"""
import json
import sys
from pathlib import Path

sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else '/work/shared/seeds/bomberman/tournament')
from evaluate import make_schedule  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / 'shared/tests/fixtures'
entrants = [('豆包 Seed 2.1', '/bots/doubao.exe'), ('Base', '/w/baseline.exe'), ('Opus 5.5', '/bots/opus.exe')]
seed = 8059238412960493467
schedule = make_schedule(entrants, [2, 3], 1, seed)
identity = dict(version='bomberman-test-1', anchor='Base', sizes=[2, 3], execution=dict(workers=2),
                scoring_code={'evaluate.py': '0' * 64, 'bt.py': '1' * 64},
                engine_manifest={'baseline.cpp': 'a' * 64, 'engine/arena.py': 'b' * 64},
                bot_hashes={n: str(i) * 64 for i, (n, _) in enumerate(entrants)},
                schedule=dict(schedule_seed=seed, entries=schedule))
identity = json.loads(json.dumps(identity))
(OUT / 'identity.json').write_text(json.dumps(identity, ensure_ascii=False, indent=2), encoding='utf-8')
(OUT / 'schedule-file.json').write_text(json.dumps(identity['schedule'], ensure_ascii=False, indent=2), encoding='utf-8')
print('wrote identity.json, schedule-file.json')
