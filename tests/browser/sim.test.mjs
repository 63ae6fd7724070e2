// The index page's Bomberman engine (games/src/bomberman/viewer_sim.js) against the Rust one,
// under node (no browser): each case is a match's data file in the compact form and the viewer
// data Rust's viewer_data gives for its replay; re-playing the first must give the second
// exactly (members in the same order too), and a difference is reported at its first frame and
// member.
//
// Usage: node sim.test.mjs <cases.json>
//   cases.json: [{"name": "...", "packed": {...compact form...}, "expected": {...viewer data...}}]
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { runInNewContext } from "node:vm";

const [casesArg] = process.argv.slice(2);
if (!casesArg) {
  console.error("usage: node sim.test.mjs <cases.json>");
  process.exit(2);
}
const source = readFileSync(new URL("../../games/src/bomberman/viewer_sim.js", import.meta.url), "utf8");
const sim = runInNewContext(source + "\nMatchfarmSim;", {});
const cases = JSON.parse(readFileSync(resolve(casesArg), "utf8"));

// The first place where two frames lists differ, as text; null if they are the same.
function firstDifference(got, want) {
  if (got.length !== want.length) return `${got.length} frames, expected ${want.length}`;
  for (let i = 0; i < want.length; i++) {
    const keys = [...new Set([...Object.keys(want[i]), ...Object.keys(got[i])])];
    if (JSON.stringify(Object.keys(got[i])) !== JSON.stringify(Object.keys(want[i]))) {
      return `frame ${i}: members ${JSON.stringify(Object.keys(got[i]))}, expected ${JSON.stringify(Object.keys(want[i]))}`;
    }
    for (const k of keys) {
      const [a, b] = [JSON.stringify(got[i][k]), JSON.stringify(want[i][k])];
      if (a !== b) return `frame ${i} (turn ${want[i].t}) member ${k}:\n  got      ${a}\n  expected ${b}`;
    }
  }
  return null;
}

test(`the page's engine re-plays ${cases.length} matches as Rust does`, () => {
  assert.ok(cases.length > 0, "some cases");
  const failures = [];
  for (const c of cases) {
    assert.ok(c.packed.sim, `${c.name}: stored in the compact form`);
    let got;
    try {
      got = sim.expand(structuredClone(c.packed));
    } catch (e) {
      failures.push(`${c.name}: ${e.message}`);
      continue;
    }
    const diff = firstDifference(got.frames, c.expected.frames);
    if (diff) { failures.push(`${c.name}: ${diff}`); continue; }
    for (const k of Object.keys(c.expected)) {
      if (JSON.stringify(got[k]) !== JSON.stringify(c.expected[k])) failures.push(`${c.name}: member ${k} differs`);
    }
    const extra = Object.keys(got).filter((k) => !Object.hasOwn(c.expected, k));
    if (extra.length) failures.push(`${c.name}: extra members ${extra.join(", ")}`);
  }
  assert.equal(failures.length, 0, `${failures.length} of ${cases.length} differ; the first:\n${failures.slice(0, 3).join("\n")}`);
});

test("a compact form that does not re-play is refused, not shown wrong", () => {
  const c = cases[0].packed;
  assert.throws(() => sim.expand({ ...structuredClone(c), meta: { ...c.meta, version: "other" } }), /re-plays/);
  assert.throws(() => sim.expand({ ...structuredClone(c), moves: c.moves + "?" }), /whole turns|bad move/);
});
