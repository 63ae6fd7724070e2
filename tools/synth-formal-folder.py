#!/usr/bin/env python3
"""A formal-sized run folder for timing `farm report` (BENCHMARKS.md, "Report page" and "Viewer
index"): from a real `farm run` folder SRC, write DST with identity.json's schedule entries
repeated up to TOTAL (new map seeds, so new map units), results.jsonl's rows repeated with new
match numbers, and one arrival per match 0.15 s apart. With --replays, every match also gets the
replay of the source match its row came from (so every replay is present and verifies, and
agrees with its row), and the viewer data file (replays/NNNNN.js) the run wrote for it where SRC
has one, renumbered, written after its replay as a run writes it.
Usage: synth-formal-folder.py SRC DST TOTAL [--replays]"""
import json, os, shutil, sys
args = [a for a in sys.argv[1:] if a != "--replays"]
with_replays = "--replays" in sys.argv[1:]
src, dst, total = args[0], args[1], int(args[2])
os.makedirs(dst, exist_ok=True)
ident = json.load(open(os.path.join(src, "identity.json")))
entries = ident["schedule"]["entries"]
rows = [json.loads(l) for l in open(os.path.join(src, "results.jsonl"))]
n0 = len(entries)
new_entries, out = [], []
for i in range(total):
    k, j = divmod(i, n0)
    e = dict(entries[j]); e["seed"] = (e["seed"] + k * 1_000_003) % 2**63
    new_entries.append(e)
    r = dict(rows[j]); r["match"] = i + 1
    out.append(json.dumps(r, ensure_ascii=False))
ident["schedule"]["entries"] = new_entries
json.dump(ident, open(os.path.join(dst, "identity.json"), "w"), ensure_ascii=False)
open(os.path.join(dst, "results.jsonl"), "w").write("\n".join(out) + "\n")
t0 = 1_796_000_000_000_000
open(os.path.join(dst, "arrivals.jsonl"), "w").write(
    "".join(json.dumps({"match": i + 1, "us": t0 + i * 150_000}) + "\n" for i in range(total)))
if with_replays:
    rdir = os.path.join(dst, "replays")
    os.makedirs(rdir, exist_ok=True)
    for i in range(total):
        n, m = i + 1, rows[i % n0]["match"]
        if "result" not in rows[i % n0]:
            continue  # a failed match has no replay
        shutil.copyfile(os.path.join(src, "replays", f"{m:05}.json.gz"), os.path.join(rdir, f"{n:05}.json.gz"))
        data = os.path.join(src, "replays", f"{m:05}.js")
        if os.path.exists(data):
            body = open(data, "rb").read()
            head = f"matchfarmReplay({m},".encode()
            assert body.startswith(head), data
            open(os.path.join(rdir, f"{n:05}.js"), "wb").write(f"matchfarmReplay({n},".encode() + body[len(head):])
