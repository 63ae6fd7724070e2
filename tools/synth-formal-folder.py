#!/usr/bin/env python3
"""A formal-sized run folder for timing `farm report` (BENCHMARKS.md, "Report page"): from a
real `farm run` folder SRC, write DST with identity.json's schedule entries repeated up to
TOTAL (new map seeds, so new map units), results.jsonl's rows repeated with new match numbers,
and one arrival per match 0.15 s apart. Usage: synth-formal-folder.py SRC DST TOTAL"""
import json, os, sys
src, dst, total = sys.argv[1], sys.argv[2], int(sys.argv[3])
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
