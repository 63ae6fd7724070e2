#!/usr/bin/env python3
"""Proboj test player that keeps state in its own folder, as real bots save state or training
checkpoints there: on every `ROUND r` it appends a line to `state.txt` beside this script, reads
the file back and answers the number of lines (r when its folder is private to the game: so a
game that saw another game's writes, or a folder that cannot be written, changes the scores).

--peek NAME: from round 2 on, also try to read the state file of player NAME's copy of this
folder (a sibling of its own copy) and log what happened (`peek ... denied` when it cannot).

--fill MB: in round 1, first try to write MB MiB into its folder (files of 1 MiB) and log how
much it wrote and what stopped it (`fill wrote N MiB stopped by errno 28` on a full copy).
"""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
state = os.path.join(here, "state.txt")
peek = None
fill = 0
argv = sys.argv[1:]
while argv:
    if argv[0] == "--peek":
        peek = argv[1]
    if argv[0] == "--fill":
        fill = int(argv[1])
    argv = argv[2:]
print("folder", here, file=sys.stderr, flush=True)


def fill_folder(mib):
    wrote, why = 0, "nothing"
    chunk = b"x" * (1 << 20)
    try:
        for i in range(mib):
            with open(os.path.join(here, "fill%04d.bin" % i), "wb") as f:
                f.write(chunk)
            wrote += 1
        why = "nothing"
    except OSError as e:
        why = "errno %d" % e.errno
    for i in range(mib):
        try:
            os.unlink(os.path.join(here, "fill%04d.bin" % i))
        except OSError:
            break
    print("fill wrote", wrote, "MiB stopped by", why, file=sys.stderr, flush=True)


def sibling(name):
    # Own copy: <copies>/<me>/<i>/<folder name>; the other player's: <copies>/<name>/0/<same>.
    holder = os.path.dirname(os.path.dirname(here))
    return os.path.join(os.path.dirname(holder), name, "0", os.path.basename(here), "state.txt")


while True:
    lines = []
    while True:
        line = sys.stdin.readline()
        if line == "":
            sys.exit(0)
        line = line.rstrip("\n")
        if line == ".":
            break
        lines.append(line)
    r = int(lines[0].split()[1])
    if fill and r == 1:
        fill_folder(fill)
    with open(state, "a") as f:
        f.write("round %d\n" % r)
    with open(state) as f:
        count = len(f.read().splitlines())
    print("round", r, "state lines", count, file=sys.stderr, flush=True)
    if peek and r >= 2:
        other = sibling(peek)
        exists = os.path.exists(other)
        try:
            with open(other) as f:
                f.read()
            print("peek", other, "exists=%s" % exists, "READ", file=sys.stderr, flush=True)
            count += 1000
        except OSError as e:
            print("peek", other, "exists=%s" % exists, "denied", type(e).__name__,
                  file=sys.stderr, flush=True)
    sys.stdout.write("%d\n.\n" % count)
    sys.stdout.flush()
