"""Deterministic synthetic match results shaped like the referee's, for fixtures and benchmarks.

A game: a roster subset, points = survival + 0.5 * kill share (quantised so ties happen), rank 1
for the best total, equal totals share a rank; a few games are invalid for scoring.
"""
import random


def game(rng, names, strengths, size, invalid_rate=0.03):
    seats = rng.sample(range(len(names)), size)
    surv, kill = [], []
    for s in seats:
        perf = strengths[s] + rng.gauss(0, 1)
        surv.append(float(max(0, min(4, round(perf + 2)))))
        kill.append(round(max(0.0, perf * 0.3 + rng.random()), 1) if rng.random() < 0.5 else 0.0)
    total_kill = sum(kill) or 1.0
    kill = [k / total_kill for k in kill]
    points = [sv + 0.5 * k for sv, k in zip(surv, kill)]
    ranks = [1 + sum(q > p for q in points) for p in points]
    errors = [1 if rng.random() < 0.02 else 0 for _ in seats]
    return dict(seed=rng.randrange(1, 2**31), names=[names[s] for s in seats], ranks=ranks,
                survival_points=surv, kill_points=kill, points=points, errors=errors,
                valid_for_scoring=rng.random() >= invalid_rate)


def rows(seed, names, sizes, games, invalid_rate=0.03, spread=1.0):
    rng = random.Random(seed)
    strengths = [rng.gauss(0, spread) for _ in names]
    out = []
    for i in range(games):
        size = sizes[i % len(sizes)]
        out.append(dict(match=i + 1, size=size, result=game(rng, names, strengths, size, invalid_rate)))
    return out


def compact(rows):
    """[size, valid, names..., ranks...] per game, for benchmark data files."""
    return [[r['size'], int(r['result']['valid_for_scoring']), *r['result']['names'], *r['result']['ranks']] for r in rows]


def expand(items):
    out = []
    for i, it in enumerate(items):
        n = it[0]
        out.append(dict(match=i + 1, size=n, result=dict(valid_for_scoring=bool(it[1]), names=it[2:2 + n], ranks=it[2 + n:2 + 2 * n])))
    return out
