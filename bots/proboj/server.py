#!/usr/bin/env python3
"""Example proboj server ("number race") for matchfarm's proboj runner tests.

Each round every living player gets `ROUND <r>` and answers one integer; its score is the sum.
The CONFIG args are `key=value` words: rounds=N, and mode=... to exercise runner features:
pause, kill, badscores, noend, unknown, garbage, big; and map=FILE (a data file read relative
to the game folder, whose first line goes to the observer). Every runner answer is recorded in the
observer stream as `ANSWER <command> <status>` so tests can check them.
"""
import sys

answers = []


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def read_message():
    lines = []
    while True:
        line = sys.stdin.readline()
        if line == "":
            sys.exit(3)
        line = line.rstrip("\n")
        if line == ".":
            return lines
        lines.append(line)


def command(header, payload=(), answer=True):
    sys.stdout.write(header + "\n" + "".join(p + "\n" for p in payload) + ".\n")
    sys.stdout.flush()
    if not answer:
        return None, []
    msg = read_message()
    status, rest = msg[0], [l for l in msg[1:] if l != ""]
    answers.append("ANSWER %s %s" % (header.split(" [")[0], status))
    return status, rest


def main():
    msg = read_message()
    assert msg[0] == "CONFIG", msg
    players = msg[1].split()
    args = dict(w.split("=", 1) for w in (msg[2] if len(msg) > 2 else "").split() if "=" in w)
    rounds = int(args.get("rounds", "3"))
    mode = args.get("mode", "normal")
    log("players", players, "args", args)
    if "map" in args:
        # A data file, relative to the game folder (the working directory), e.g. ../maps/a.txt.
        with open(args["map"]) as f:
            first = f.readline().strip()
        command("TO OBSERVER", ["map %s" % first])
    score = {p: 0 for p in players}
    alive = set(players)
    if mode == "unknown":
        command("HELLO THERE", ["x"], answer=False)
        command("TO PLAYER nobody", ["x"])
    if mode == "garbage":
        sys.stdout.write("this is not a command\nneither is this\n.\n")
        sys.stdout.flush()
    for r in range(1, rounds + 1):
        for p in players:
            if p not in alive:
                continue
            payload = ["ROUND %d" % r]
            if mode == "big":
                payload.append("x" * 300000)
            status, _ = command("TO PLAYER %s round %d starts" % (p, r), payload)
            if status != "OK":
                alive.discard(p)
        if mode == "pause" and r == 1:
            command("PAUSE PLAYER %s" % players[0])
            command("RESUME PLAYER %s" % players[0])
        if mode == "kill" and r == 2:
            command("KILL PLAYER %s" % players[-1])
        for p in players:
            status, lines = command("READ PLAYER %s" % p)
            if status == "OK" and lines:
                try:
                    score[p] += int(lines[0])
                except ValueError:
                    log("bad answer from", p, lines[:1])
            else:
                alive.discard(p)
        command("TO OBSERVER", ["round %d %s" % (r, " ".join("%s:%d" % (p, score[p]) for p in players))])
    if mode == "noend":
        command("TO OBSERVER", answers)
        sys.exit(0)
    if mode == "badscores":
        command("SCORES", ["%s notanumber" % players[0]])
    command("SCORES", ["%s %d" % (p, score[p]) for p in players])
    command("TO OBSERVER", answers)
    command("END", answer=False)
    # Stay alive: the runner must kill us.
    import time
    time.sleep(1000)


main()
