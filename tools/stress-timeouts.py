#!/usr/bin/env python3
"""Stress benchmark of issue 21: counts spurious timeouts under load.

One `farm worker` (cluster mode: RabbitMQ 127.0.0.1:5672, Redis 127.0.0.1:6379 on a dedicated
database) plays at the same time:

* Bomberman: `farm run --broker` tournaments of 2, 5 and 10 players, one after another (a fresh
  coordinator per batch, frozen schedules), bots from bots/test/stress_*.cpp and answer.cpp, by
  share of seats: fast 50% (answers at once), sleep 32% (a few µs + usleep(3000) per turn),
  burn 6% (30 ms of thread CPU, as in the issue's first case), ponder 8% (8 ms on the main thread + at most 8 ms on a helper
  thread after each answer) and slow 4% (80 ms: too slow on purpose, its timeouts are deserved);
* proboj: `farm proboj --broker` runs of bots/proboj/server.py with the players of
  bots/test/stress/player.py (sleep, burn 25 ms, think 150 ms, ponder) under a 1 s read timeout;
* 钳王: `farm ladder serve --broker` with bots/test/stress/{quick,burn}.js, challenged in a loop
  over HTTP (2000 ms move limit);

plus an outside CPU hog (`yes >/dev/null`) for the whole run. Then it reads every replay, log and
match record, counts bot-turns and timeouts, and classifies each timeout as spurious (the bot's
own demand, known from its kind, is at most 60% of its limit) or deserved (kind `slow`). It also
lists over-charged turns (turns of the fast, sleep and burn Bomberman bots charged more than 5 ms
of CPU above their demand, timed out or not) and the `cpu-anomaly` lines the burn bots write when their own thread clock saw
time the burn does not account for.

    python3 tools/stress-timeouts.py --bot-turns 40000        # quick run, ~3 minutes
    python3 tools/stress-timeouts.py --bot-turns 1000000      # the full run

Stops once the bot-turns of all three games reach --bot-turns (checked after each Bomberman
batch). Outputs under --out (default target/stress-timeouts/<time>): every run's folder,
`summary.txt` (what is printed) and `summary.json`. Exit 0 when it ran, 1 when spurious
timeouts were found, 2 on a failure. Every process it starts is stopped at the end (Ctrl-C
too); the Redis database is flushed and this run's RabbitMQ queues deleted.
"""
import argparse
import gzip
import hashlib
import heapq
import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BROKER = "amqp://guest:guest@127.0.0.1:5672/%2f"
TURN_MS = 50

# Bomberman entrants: kind -> (count of entrants, share of seats, per-turn demand in ms).
BOMBER_KINDS = {
    "sleep": (6, 0.32, 3.0),
    "fast": (8, 0.50, 0.1),
    "burn": (3, 0.06, 30.0),
    "ponder": (3, 0.08, 16.0),
    "slow": (2, 0.04, 80.0),
}
BOMBER_FILES = {"fast": "answer.cpp"}  # the others: stress_<kind>.cpp
# proboj players: name -> kind; demand per message in ms; limit 1 s.
PROBOJ_PLAYERS = {f"sleep{i}": "sleep" for i in range(6)}
PROBOJ_PLAYERS.update({"burn0": "burn", "think0": "think", "ponder0": "ponder", "ponder1": "ponder"})
PROBOJ_DEMAND_MS = {"sleep": 3.0, "burn": 25.0, "think": 150.0, "ponder": 16.0}
PROBOJ_TIMEOUT_S = 1.0
PROBOJ_ROUNDS = 40
# 钳王 players: name -> code file; move limit 2000 ms.
# A turn charged more than this much CPU above its bot's demand is listed as over-charged.
OVER_MS = 5.0
# ... for the kinds whose CPU per turn is their demand: not `slow` (eliminated at turn 1) nor
# `ponder` (its helper thread spins between the SIGCONT and the main thread's read, by design
# charged to it; BENCHMARKS.md "Fairness").
OVER_KINDS = ("fast", "sleep", "burn")
QW_PLAYERS = {"quick0": "quick.js", "quick1": "quick.js", "burn0": "burn.js", "burn1": "burn.js"}


def turn_entries(bot_timing):
    """A bot's per-turn timing from a replay as dicts, in either form: a list of objects, or
    the value lists under column names the farm writes (games::bomberman::replay::turn_timing)."""
    per_turn = bot_timing.get("per_turn", [])
    if isinstance(per_turn, list):
        return per_turn
    columns = per_turn.get("columns", [])
    out = []
    for row in per_turn.get("rows", []):
        entry = dict(zip(columns, row))
        if len(row) > len(columns) and isinstance(row[len(columns)], dict):
            entry.update(row[len(columns)])
        out.append(entry)
    return out


def log(*a):
    print(time.strftime("%H:%M:%S"), *a, file=sys.stderr, flush=True)


def loadavg():
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


class Procs:
    """Every process this harness started (each in its own process group), stopped at the end."""

    def __init__(self):
        self.procs = []
        self.lock = threading.Lock()

    def start(self, args, **kw):
        p = subprocess.Popen(args, start_new_session=True, **kw)
        with self.lock:
            self.procs.append(p)
        return p

    def stop(self, p, grace=10.0):
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                p.wait(grace)
            except subprocess.TimeoutExpired:
                pass
        try:  # the group leader's group, created by start_new_session: ours alone
            os.killpg(p.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            pass

    def stop_all(self):
        with self.lock:
            procs = list(reversed(self.procs))
        for p in procs:
            self.stop(p)


class Stress:
    def __init__(self, a):
        self.a = a
        self.out = Path(a.out).resolve()
        self.procs = Procs()
        self.stop = threading.Event()
        self.tag = f"stress21-{os.getpid()}"
        self.redis = f"redis://127.0.0.1:6379/{a.redis_db}"
        self.key = self.out / "farm.key"
        self.env = dict(os.environ, FARM_KEY_FILE=str(self.key), FARM_LOG="warn")
        for k in ("FARM_BROKER", "FARM_REDIS", "FARM_KEY"):
            self.env.pop(k, None)
        self.lock = threading.Lock()
        # Tallies: game -> {turns, spurious, deserved, runs}; plus examples of every timeout.
        self.tally = {g: {"bot_turns": 0, "spurious": 0, "deserved": 0, "runs": 0}
                      for g in ("bomberman", "proboj", "qianwang")}
        self.timeouts = []
        self.slowest = []  # heap of (wall_us, seq, record)
        # Closest calls: turns of bots that are never too slow, by the time charged (the `late`
        # breakdown exists for turns whose wall time reached the limit).
        self.closest = []  # heap of (charged_us, seq, record)
        # Over-charged CPU: turns whose CPU (all the bot's threads, as the farm read it) is more
        # than OVER_MS above the bot's own demand, counted, the 10 largest kept; and every
        # `cpu-anomaly` line the burn bots wrote (stress_burn.cpp checks its own clock).
        self.over = {"count": 0, "top": []}  # top: heap of (excess_us, seq, record)
        self.anomalies = []
        self.seq = 0
        self.errors = []

    # ---------------------------------------------------------------- set-up and clean-up

    def sh(self, args, **kw):
        return subprocess.run(args, capture_output=True, text=True, timeout=120, **kw)

    def queues(self):
        r = self.sh(["rabbitmqctl", "list_queues", "-q", "name"])
        return {l.strip() for l in r.stdout.splitlines() if l.strip().startswith("farm.")}

    def setup(self):
        self.out.mkdir(parents=True, exist_ok=True)
        self.key.write_text(os.urandom(24).hex() + "\n")
        n = self.sh(["redis-cli", "-n", str(self.a.redis_db), "DBSIZE"]).stdout.strip()
        if n not in ("0", "(integer) 0"):
            if not self.a.flush_db_first:
                raise SystemExit(f"Redis database {self.a.redis_db} holds {n} keys (a test running?); "
                                 "pick another --redis-db or pass --flush-db-first")
            self.sh(["redis-cli", "-n", str(self.a.redis_db), "FLUSHDB"])
        self.load_start = loadavg()
        log("load average at start:", self.load_start)

    def cleanup(self):
        self.stop.set()
        self.procs.stop_all()
        try:
            self.sh(["redis-cli", "-n", str(self.a.redis_db), "FLUSHDB"])
        except Exception as e:  # noqa: BLE001
            log("could not flush Redis:", e)
        try:
            # Coordinators delete their queues after a finished run; an interrupted one (or the
            # ladder) leaves them: delete every queue this run's logs name, and the ladder's.
            bases = {f"farm.{self.tag[:16]}-{hashlib.sha256(self.tag.encode()).hexdigest()[:8]}"}
            for f in self.out.rglob("*.log"):
                bases.update(re.findall(r"\(queue (farm\.[^ )]+)\.jobs\)", f.read_text(errors="replace")))
            left = self.queues()
            for base in sorted(bases):
                for q in (f"{base}.jobs", f"{base}.results", f"{base}.dlq"):
                    if q in left:
                        self.sh(["rabbitmqctl", "delete_queue", q])
                        log("deleted queue", q)
        except Exception as e:  # noqa: BLE001
            log("could not delete queues:", e)

    # ---------------------------------------------------------------- processes

    def farm(self):
        return str(Path(self.a.farm).resolve())

    def start_hog(self):
        if self.a.no_hog:
            return
        self.hog = self.procs.start(["sh", "-c", "exec yes >/dev/null"])
        log("outside CPU hog: pid", self.hog.pid)

    def start_worker(self):
        args = [self.farm(), "worker", "--broker", BROKER, "--redis", self.redis,
                "--slots", str(self.a.slots), "--id", f"{self.tag}-w",
                "--scratch", str(self.out / "scratch")]
        if self.a.cores:
            args += ["--cores", str(self.a.cores)]
        env = dict(self.env, FARM_CACHE_DIR=str(self.out / "cache"))
        self.worker_log = open(self.out / "worker.log", "w")
        self.worker = self.procs.start(args, cwd=self.out, env=env, stdout=self.worker_log,
                                       stderr=subprocess.STDOUT)
        log("farm worker: pid", self.worker.pid, "slots", self.a.slots)

    def cluster_env(self):
        return dict(self.env, FARM_BROKER=BROKER, FARM_REDIS=self.redis,
                    FARM_CACHE_DIR=str(self.out / "cache-coordinator"))

    # ---------------------------------------------------------------- Bomberman

    def bomber_entrants(self):
        out = []
        for kind, (count, _, _) in BOMBER_KINDS.items():
            for i in range(count):
                out.append((f"{kind}{i:02d}", kind))
        return out

    def bomber_schedule(self, matches, rng, version):
        entrants = self.bomber_entrants()
        by_kind = {}
        for slot, (_, kind) in enumerate(entrants):
            by_kind.setdefault(kind, []).append(slot)
        kinds = list(BOMBER_KINDS)
        weights = [BOMBER_KINDS[k][1] for k in kinds]
        entries = []
        for m in range(matches):
            size = (2, 5, 10)[m % 3]
            free = {k: list(v) for k, v in by_kind.items()}
            slots = []
            while len(slots) < size:
                k = rng.choices(kinds, weights)[0]
                if free[k]:
                    slots.append(free[k].pop(rng.randrange(len(free[k]))))
            entries.append({"size": size, "seed": rng.randrange(1, 2**31), "slots": slots})
        # A frozen schedule must use every slot: put each unused one in place of a seat whose
        # entrant plays elsewhere too (one of its own kind when there is one).
        uses = {}
        for e in entries:
            for x in e["slots"]:
                uses[x] = uses.get(x, 0) + 1
        for slot, (_, kind) in enumerate(entrants):
            if uses.get(slot):
                continue
            seats = [(e, i) for e in entries if slot not in e["slots"]
                     for i, x in enumerate(e["slots"]) if uses[x] > 1]
            seats.sort(key=lambda ei: entrants[ei[0]["slots"][ei[1]]][1] != kind)
            e, i = seats[0]
            uses[e["slots"][i]] -= 1
            e["slots"][i] = slot
            uses[slot] = 1
        return {"sizes": [2, 5, 10], "entries": entries, "baseline_slot": 0,
                "schedule_seed": rng.randrange(2**31), "version": version}

    def bomberman(self, batch, matches, rng):
        version = json.loads((REPO / "workspace/bomberman/schedule-bundled.json").read_text())["version"]
        d = self.out / "bomberman" / f"batch{batch:03d}"
        d.parent.mkdir(parents=True, exist_ok=True)
        sched = self.out / "bomberman" / f"batch{batch:03d}.schedule.json"
        sched.write_text(json.dumps(self.bomber_schedule(matches, rng, version)))
        bots = [f"{name}={REPO / 'bots/test' / BOMBER_FILES.get(kind, f'stress_{kind}.cpp')}"
                for name, kind in self.bomber_entrants()]
        args = [self.farm(), "run", "--bots", *bots, "--anchor", bots[0].split("=")[0],
                "--sizes", "2", "5", "10", "--schedule", str(sched), "--output", str(d),
                "--workers", str(self.a.slots), "--report-every", "100000",
                "--workspace", str(REPO / "workspace/bomberman")]
        with open(str(d) + ".log", "w") as lf:
            p = self.procs.start(args, cwd=REPO, env=self.cluster_env(), stdout=lf, stderr=subprocess.STDOUT)
            while p.poll() is None:
                if self.stop.wait(1.0) and self.a.interrupted:
                    self.procs.stop(p)
        if p.returncode not in (0,):
            self.errors.append(f"bomberman batch {batch}: farm run exited {p.returncode} (see {d}.log)")
            log(self.errors[-1])
        return self.read_bomberman(d)

    def read_bomberman(self, d):
        turns = 0
        kinds = dict(self.bomber_entrants())
        for f in sorted((d / "replays").glob("*.json.gz")):
            r = json.loads(gzip.open(f).read())
            res = r.get("result", r)
            names = res.get("names") or r.get("names")
            for seat, tail in enumerate(r.get("stderr_tails") or []):
                for ln in (tail or "").splitlines():
                    if ln.startswith("cpu-anomaly"):
                        with self.lock:
                            self.anomalies.append(f"{f.name} {names[seat]}: {ln}")
            timing = res.get("timing") or r.get("timing") or {}
            for seat, name in enumerate(names):
                t = timing.get(f"bot_{seat}") or {}
                kind = kinds.get(name, "?")
                limit_ms = TURN_MS
                for pt in turn_entries(t):
                    turns += 1
                    rec = dict(pt, game="bomberman", match=f.name, bot=name, kind=kind, seat=seat)
                    if pt.get("turn", 0) > 0:
                        with self.lock:
                            self.seq += 1
                            item = (pt.get("wall_us", 0), self.seq, rec)
                            if len(self.slowest) < 10:
                                heapq.heappush(self.slowest, item)
                            else:
                                heapq.heappushpop(self.slowest, item)
                            late = pt.get("late")
                            if late and kind != "slow":
                                item = (late.get("charged_us", 0), self.seq, rec)
                                if len(self.closest) < 10:
                                    heapq.heappush(self.closest, item)
                                else:
                                    heapq.heappushpop(self.closest, item)
                    demand_us = BOMBER_KINDS.get(kind, (0, 0, 1e9))[2] * 1000
                    excess = pt.get("cpu_us", 0) - demand_us
                    if pt.get("turn", 0) > 0 and kind in OVER_KINDS and excess > OVER_MS * 1000:
                        with self.lock:
                            self.seq += 1
                            self.over["count"] += 1
                            item = (excess, self.seq, rec)
                            if len(self.over["top"]) < 10:
                                heapq.heappush(self.over["top"], item)
                            else:
                                heapq.heappushpop(self.over["top"], item)
                    if pt.get("met", True) is False:
                        self.count_timeout("bomberman", kind, BOMBER_KINDS.get(kind, (0, 0, 1e9))[2],
                                           2000 if pt.get("turn", 0) == 0 else limit_ms, rec)
        with self.lock:
            self.tally["bomberman"]["bot_turns"] += turns
            self.tally["bomberman"]["runs"] += 1
        return turns

    def count_timeout(self, game, kind, demand_ms, limit_ms, rec):
        spurious = demand_ms <= 0.6 * limit_ms
        with self.lock:
            self.tally[game]["spurious" if spurious else "deserved"] += 1
            self.timeouts.append(dict(rec, spurious=spurious, demand_ms=demand_ms, limit_ms=limit_ms))

    # ---------------------------------------------------------------- proboj

    def proboj_loop(self):
        rng = random.Random(self.a.seed + 1)
        names = list(PROBOJ_PLAYERS)
        run = 0
        while not self.stop.is_set():
            run += 1
            d = self.out / "proboj" / f"run{run:03d}"
            d.mkdir(parents=True, exist_ok=True)
            games = []
            for g in range(self.a.proboj_games):
                size = (2, 5, 10)[g % 3]
                games.append({"gamefolder": f"g{g:02d}", "players": rng.sample(names, size),
                              "args": f"rounds={PROBOJ_ROUNDS}"})
            config = {
                "server": "python3 bots/proboj/server.py",
                "players": {n: {"command": f"python3 bots/test/stress/player.py --kind {k}", "language": "python"}
                            for n, k in PROBOJ_PLAYERS.items()},
                "processes_per_player": 1,
                "timeout": {"python": PROBOJ_TIMEOUT_S},
                "disable_logs": False,
                "disable_gzip": True,
                "game_root": str(d / "games"),
            }
            (d / "config.json").write_text(json.dumps(config, indent=1))
            (d / "games.json").write_text(json.dumps(games, indent=1))
            args = [self.farm(), "proboj", str(d / "config.json"), str(d / "games.json"),
                    "--broker", BROKER, "--redis", self.redis, "--key-file", str(self.key)]
            with open(d / "farm.log", "w") as lf:
                p = self.procs.start(args, cwd=REPO, env=self.env, stdout=lf, stderr=subprocess.STDOUT)
                while p.poll() is None:
                    if self.stop.wait(1.0) and self.a.interrupted:
                        self.procs.stop(p)
            if p.returncode != 0 and not self.a.interrupted:
                self.errors.append(f"proboj run {run}: exited {p.returncode} (see {d}/farm.log)")
                log(self.errors[-1])
            self.read_proboj(d, games)

    def read_proboj(self, d, games):
        turns = 0
        for g in games:
            for name in g["players"]:
                f = d / "games" / g["gamefolder"] / "logs" / f"{name}.txt"
                if not f.exists():
                    continue
                text = f.read_text(errors="replace")
                turns += len(re.findall(r"^\[proboj\] round \d+ starts", text, re.M))
                for _ in re.findall(r"^\[proboj\] killing process due to read timeout", text, re.M):
                    kind = PROBOJ_PLAYERS[name]
                    self.count_timeout("proboj", kind, PROBOJ_DEMAND_MS[kind], PROBOJ_TIMEOUT_S * 1000,
                                       {"game": "proboj", "match": f"{d.name}/{g['gamefolder']}", "bot": name,
                                        "kind": kind})
        with self.lock:
            self.tally["proboj"]["bot_turns"] += turns
            self.tally["proboj"]["runs"] += 1

    # ---------------------------------------------------------------- 钳王

    def http(self, method, path, key=None, body=None):
        req = urllib.request.Request(self.ladder_url + path, method=method,
                                     data=None if body is None else json.dumps(body).encode())
        req.add_header("Content-Type", "application/json")
        if key:
            req.add_header("Authorization", f"Bearer {key}")
        try:
            with urllib.request.urlopen(req, timeout=600) as r:
                return r.status, json.loads(r.read() or b"null")
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"null")
        except (OSError, ValueError) as e:  # the ladder stopped, or not JSON
            return 0, {"error": str(e)}

    def start_ladder(self):
        data = self.out / "qianwang" / "ladder-data"
        data.mkdir(parents=True, exist_ok=True)
        args = [self.farm(), "ladder", "serve", "--data", str(data), "--listen", "127.0.0.1:0",
                "--broker", BROKER, "--redis", self.redis, "--cluster-name", self.tag,
                "--rate-challenge", "1000000/1", "--rate-submit", "1000/1", "--rate-auth", "1000/1"]
        self.ladder_log = self.out / "qianwang" / "ladder.log"
        p = self.procs.start(args, cwd=REPO, env=self.env, stdout=subprocess.PIPE,
                             stderr=open(self.ladder_log, "w"), text=True)
        deadline = time.time() + 120
        for line in p.stdout:
            if line.startswith("ladder listening on "):
                self.ladder_url = line.split("ladder listening on ", 1)[1].strip()
                break
            if time.time() > deadline:
                break
        else:
            raise RuntimeError(f"farm ladder serve did not start (see {self.ladder_log})")
        threading.Thread(target=lambda: [None for _ in p.stdout], daemon=True).start()
        self.qw = {}
        for name, code in QW_PLAYERS.items():
            r = self.sh([self.farm(), "ladder", "admin", "--data", str(data), "create-player", "--name", name,
                         "--email", f"{name}@example.org", "--verified"], cwd=REPO, env=self.env)
            fields = dict(l.split(": ", 1) for l in r.stdout.splitlines() if ": " in l)
            if "key" not in fields:
                raise RuntimeError(f"create-player {name}: {r.stdout}{r.stderr}")
            key = fields["key"].strip()
            status, ans = self.http("POST", "/api/agent/bot/code/submit", key,
                                    {"code": (REPO / "bots/test/stress" / code).read_text(), "notes": "stress"})
            if status != 200:
                raise RuntimeError(f"submit {name}: {status} {ans}")
            self.qw[name] = (int(fields["botId"]), key, code)
        log("钳王 ladder on", self.ladder_url, "players", ", ".join(self.qw))

    def qianwang_loop(self):
        rng = random.Random(self.a.seed + 2)
        names = list(self.qw)
        while not self.stop.is_set():
            a, b = rng.sample(names, 2)
            status, ans = self.http("POST", "/api/agent/challenge", self.qw[a][1], {"challengedBotId": self.qw[b][0]})
            if status != 200:
                if not self.stop.is_set():
                    self.errors.append(f"钳王 challenge {a} -> {b}: {status} {ans}")
                    log(self.errors[-1])
                    self.stop.wait(2)
                continue
            for m in (ans or {}).get("matches", []):
                st, rec = self.http("GET", f"/api/match/{m['urlId']}")
                if st != 200:
                    continue
                self.read_qianwang(rec, m["urlId"])
            with self.lock:
                self.tally["qianwang"]["runs"] += 1

    def read_qianwang(self, rec, url_id):
        record = rec.get("record") if isinstance(rec.get("record"), dict) else rec
        plies = [p for p in record.get("plies", []) if p.get("move") is not None]
        out = record.get("outcome") or {}
        turns = len(plies)
        if out.get("runtime") == "timeout":
            turns += 1  # the timed-out move was a bot-turn too
            loser = {"black": "red", "red": "black"}.get(out.get("winner") or "", "")
            who = (record.get(loser) or {}).get("name", "?")
            kind = next((c.split(".")[0] for n, (_, _, c) in self.qw.items() if n in str(who)), "?")
            self.count_timeout("qianwang", kind, 50.0, 2000.0,
                               {"game": "qianwang", "match": url_id, "bot": who, "kind": kind, "outcome": out})
        with self.lock:
            self.tally["qianwang"]["bot_turns"] += turns

    # ---------------------------------------------------------------- the run

    def total_turns(self):
        with self.lock:
            return sum(t["bot_turns"] for t in self.tally.values())

    def run(self):
        t0 = time.time()
        self.setup()
        self.start_hog()
        self.start_worker()
        threads = []
        if not self.a.no_qianwang:
            self.start_ladder()
            threads.append(threading.Thread(target=self.qianwang_loop, daemon=True))
        if not self.a.no_proboj:
            threads.append(threading.Thread(target=self.proboj_loop, daemon=True))
        for t in threads:
            t.start()
        rng = random.Random(self.a.seed)
        per_match = 1500.0  # first guess of Bomberman bot-turns per match; measured after batch 1
        batch, bm_matches = 0, 0
        while self.total_turns() < self.a.bot_turns and not self.stop.is_set():
            batch += 1
            left = self.a.bot_turns - self.total_turns()
            share = left * 0.85  # Bomberman's share; proboj and 钳王 bring the rest
            matches = int(max(12, min(self.a.batch_matches, share / per_match + 1)))
            matches -= matches % 3 if matches > 3 else 0
            log(f"Bomberman batch {batch}: {matches} matches; bot-turns so far {self.total_turns()}, "
                f"load {loadavg()}")
            got = self.bomberman(batch, matches, rng)
            bm_matches += matches
            per_match = max(100.0, self.tally["bomberman"]["bot_turns"] / max(1, bm_matches))
            if got == 0:
                self.errors.append(f"Bomberman batch {batch} produced no replays; stopping")
                break
        self.stop.set()
        self.load_end = loadavg()
        for t in threads:
            t.join(timeout=900)
        self.elapsed = time.time() - t0
        return self.report()

    def report(self):
        tot = {k: sum(t[k] for t in self.tally.values()) for k in ("bot_turns", "spurious", "deserved")}
        lines = [
            f"stress-timeouts (issue 21): --bot-turns {self.a.bot_turns}, worker --slots {self.a.slots}"
            f"{' --cores ' + str(self.a.cores) if self.a.cores else ''}, hog {'off' if self.a.no_hog else 'yes >/dev/null'}, "
            f"{self.elapsed / 60:.1f} min, {os.cpu_count()} CPUs",
            f"load average at start: {self.load_start}   at end: {self.load_end}",
            f"total bot-turns:     {tot['bot_turns']}",
            f"spurious timeouts:   {tot['spurious']}",
            f"deserved timeouts:   {tot['deserved']}",
            "",
            f"{'game':<10} {'runs':>5} {'bot-turns':>10} {'spurious':>9} {'deserved':>9}",
        ]
        for g, t in self.tally.items():
            lines.append(f"{g:<10} {t['runs']:>5} {t['bot_turns']:>10} {t['spurious']:>9} {t['deserved']:>9}")
        header = (f"{'match':<14} {'bot':<9} {'turn':>4} {'met':>5} {'wall':>7} {'cpu':>7} {'waited':>7} "
                  f"{'token':>6} {'host_w':>6} | late: main_cpu main_waited idle host charged states")

        def row(r):
            late = r.get("late") or {}
            lt = (f"{late.get('main_cpu_us', '-')} {late.get('main_waited_us', '-')} {late.get('idle_us', '-')} "
                  f"{late.get('host_us', 0)} {late.get('charged_us', '-')} "
                  f"{','.join(late.get('states', [])) or '-'}") if late else "-"
            return (f"{r['match']:<14} {r['bot']:<9} {r.get('turn', 0):>4} {str(r.get('met')):>5} "
                    f"{r.get('wall_us', 0):>7} {r.get('cpu_us', 0):>7} {r.get('waited_us', 0):>7} "
                    f"{r.get('token_us', 0):>6} {r.get('host_waited_us', 0):>6} | {lt}")
        lines += ["", "10 slowest Bomberman turns (turn >= 1; limit 50 ms; µs):", header]
        lines += [row(r) for _, _, r in sorted(self.slowest, key=lambda x: -x[0])]
        lines += ["", "10 closest calls: turns of bots that are never too slow, most time charged (µs):", header]
        lines += [row(r) for _, _, r in sorted(self.closest, key=lambda x: -x[0])]
        over = [r for _, _, r in sorted(self.over["top"], key=lambda x: -x[0])]
        lines += ["", f"over-charged CPU: {self.over['count']} Bomberman turns (turn >= 1) charged more than "
                  f"{OVER_MS:g} ms of CPU above their bot's demand; the largest (µs):", header]
        lines += [row(r) for r in over]
        lines += ["", f"cpu-anomaly lines of the burn bots (their own clock): {len(self.anomalies)}"]
        lines += ["  " + a for a in self.anomalies[:20]]
        spur = [t for t in self.timeouts if t["spurious"]]
        if spur:
            lines += ["", f"spurious timeouts (first 20 of {len(spur)}):"]
            for t in spur[:20]:
                lines.append("  " + json.dumps(t, ensure_ascii=False))
        if self.errors:
            lines += ["", "problems:"] + ["  " + e for e in self.errors]
        lines.append(f"\noutputs: {self.out}")
        text = "\n".join(lines)
        (self.out / "summary.txt").write_text(text + "\n")
        (self.out / "summary.json").write_text(json.dumps({
            "args": vars(self.a), "elapsed_s": self.elapsed, "load_start": self.load_start,
            "load_end": self.load_end, "totals": tot, "per_game": self.tally,
            "slowest": [r for _, _, r in sorted(self.slowest, key=lambda x: -x[0])],
            "closest": [r for _, _, r in sorted(self.closest, key=lambda x: -x[0])],
            "over_charged": {"count": self.over["count"], "largest": over}, "anomalies": self.anomalies,
            "timeouts": self.timeouts, "problems": self.errors}, indent=1, ensure_ascii=False))
        print(text)
        if self.errors:
            return 2
        return 1 if tot["spurious"] else 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bot-turns", type=int, default=40000, help="stop after this many bot-turns (all games)")
    p.add_argument("--out", default=None, help="output folder (default target/stress-timeouts/<time>)")
    p.add_argument("--farm", default=str(REPO / "target/release/farm"))
    p.add_argument("--slots", type=int, default=4, help="the worker's --slots (matches at once)")
    p.add_argument("--cores", type=int, default=None, help="the worker's --cores (default: its own)")
    p.add_argument("--redis-db", type=int, default=15, help="dedicated Redis database, flushed at the end")
    p.add_argument("--flush-db-first", action="store_true", help="flush that database if it is not empty")
    p.add_argument("--batch-matches", type=int, default=150, help="most Bomberman matches per coordinator")
    p.add_argument("--proboj-games", type=int, default=6, help="games per proboj run")
    p.add_argument("--seed", type=int, default=21)
    p.add_argument("--no-hog", action="store_true")
    p.add_argument("--no-proboj", action="store_true")
    p.add_argument("--no-qianwang", action="store_true")
    a = p.parse_args()
    a.out = a.out or str(REPO / "target/stress-timeouts" / time.strftime("%Y%m%d-%H%M%S"))
    a.interrupted = False
    if not Path(a.farm).exists():
        raise SystemExit(f"{a.farm} is missing: cargo build --release -p coordinator")
    s = Stress(a)

    def on_signal(signum, _frame):
        a.interrupted = True
        s.stop.set()
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)  # also when started with SIGINT ignored (a background job)
    try:
        code = s.run()
    except KeyboardInterrupt:
        a.interrupted = True
        log("interrupted: stopping everything")
        code = 130
    except Exception as e:  # noqa: BLE001
        log("failed:", e)
        code = 2
    finally:
        s.stop.set()
        s.cleanup()
    sys.exit(code)


if __name__ == "__main__":
    main()
