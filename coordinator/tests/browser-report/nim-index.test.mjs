// Headless-Chromium test of a Nim run's viewer index, replays/index.html, opened from disk
// (file://, no server): every game of results.json is listed with its players, winner, number
// of moves and fault (the fault read from the game's record), and a game opened by address
// (#N) or by click shows its record heap by heap: the start heaps, the heaps after each move
// (forward and back), and the winner and fault at the end. Bot names stay text: the run has a
// bot named like HTML (HOSTILE_NAME), which must show as written and create no element.
//
// Usage: node nim-index.test.mjs <run folder> <hostile bot name>
// Env: REPORT_PW_ROOT = folder whose node_modules has playwright-core (tests/browser);
//      CHROMIUM (default /usr/bin/chromium).
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [dirArg, hostile] = process.argv.slice(2);
if (!dirArg || !hostile) {
  console.error("usage: node nim-index.test.mjs <run folder> <hostile bot name>");
  process.exit(2);
}
const dir = resolve(dirArg);
const require = createRequire(join(resolve(process.env.REPORT_PW_ROOT || "."), "package.json"));
const { chromium } = require("playwright-core");
const results = JSON.parse(readFileSync(join(dir, "results.json"), "utf8"));
const replays = pathToFileURL(join(dir, "replays")).href + "/";
const record = (n) => JSON.parse(gunzipSync(readFileSync(join(dir, "replays", String(n).padStart(5, "0") + ".json.gz"))).toString());
// The heaps at the start and after each move, by the rules.
function states(rec) {
  const out = [rec.heaps.slice()];
  for (const m of rec.moves) {
    const h = out[out.length - 1].slice();
    h[m.heap] -= m.take;
    out.push(h);
  }
  return out;
}

async function withPage(hash, fn) {
  const profile = mkdtempSync(join(tmpdir(), "nim-index-"));
  const errors = [];
  const foreign = [];
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
      "--disable-component-update", "--disable-sync"],
  });
  try {
    const page = browser.pages()[0] ?? (await browser.newPage());
    page.on("console", (m) => { if (m.type() === "error") errors.push(`console: ${m.text()}`); });
    page.on("pageerror", (e) => errors.push(`page error: ${e.message}`));
    page.on("dialog", (d) => { errors.push(`dialog: ${d.message()}`); d.dismiss().catch(() => {}); });
    page.on("request", (r) => {
      const u = r.url();
      if (!(u.startsWith(replays) && /^(index\.html(#.*)?|index\.js|\d{5,}\.js)$/.test(u.slice(replays.length)))) foreign.push(u);
    });
    await page.goto(replays + "index.html" + hash, { waitUntil: "load" });
    await page.waitForSelector("body[data-ready=true]");
    await fn(page);
    // A name read as HTML would have made elements: the page itself has no img, b or i.
    assert.equal(await page.locator("img, b, i, svg, iframe").count(), 0, "no element from a bot name");
    assert.deepEqual(errors, [], "no console or page errors, no dialog");
    assert.deepEqual(foreign, [], "no request besides the page and its files");
  } finally {
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

test("the run has a faulting game and a game of the hostile name", () => {
  assert.ok(results.length >= 6, `${results.length} games`);
  assert.ok(results.some((r) => r.result.names.includes(hostile)), "the hostile name played");
  assert.ok(results.some((r) => record(r.match).fault), "a game ended by a fault");
  assert.ok(results.some((r) => !record(r.match).fault), "a game ended by the last object");
});

test("every game is listed with its players, winner, moves and fault", async () => {
  await withPage("", async (page) => {
    const rows = page.locator("#matches tbody tr");
    assert.equal(await rows.count(), results.length);
    for (const [i, r] of results.entries()) {
      const row = rows.nth(i);
      // The fault cell is filled from the game's data file once the row is in view.
      await row.scrollIntoViewIfNeeded();
      await row.locator("td.fault[data-fault]").waitFor();
      const [n, first, second, winner, moves, fault] = await row.locator("td").evaluateAll((tds) => tds.map((td) => td.textContent));
      const rec = record(r.match);
      assert.equal(n, "#" + r.match);
      assert.deepEqual([first, second], r.result.names);
      assert.deepEqual(rec.players.map((p) => p.name), r.result.names);
      assert.equal(winner, r.result.names[r.result.ranks.indexOf(1)]);
      assert.equal(winner, rec.players[rec.winner].name);
      assert.equal(Number(moves), r.result.turns);
      assert.equal(Number(moves), rec.moves.length);
      assert.equal(fault, rec.fault ? `${rec.players[rec.fault.seat].name}: ${rec.fault.kind}` : "—", `game ${r.match}`);
    }
    // The hostile name is text, exactly as given.
    const cells = await page.locator("#matches tbody td").allTextContents();
    assert.ok(cells.includes(hostile), "the hostile name is shown as text");
  });
});

// Step through game n forward to the end and back to the start, checking every position.
async function stepThrough(page, n) {
  const rec = record(n);
  const want = states(rec);
  const heaps = () => page.locator("#heaps .heap .count").allTextContents().then((t) => t.map(Number));
  const moves = rec.moves.length;
  assert.equal(await page.locator("#moves li").count(), moves);
  assert.deepEqual(await heaps(), rec.heaps, "the start heaps are the record's");
  assert.equal(await page.locator("#step").textContent(), `move 0 / ${moves}`);
  for (let k = 1; k <= moves; k++) {
    await page.click("#next");
    assert.equal(await page.locator("#step").textContent(), `move ${k} / ${moves}`);
    assert.deepEqual(await heaps(), want[k], `game ${n}, after move ${k}`);
    const m = rec.moves[k - 1];
    assert.equal(await page.locator(`#heaps .heap.moved`).getAttribute("data-heap"), String(m.heap));
    const event = await page.locator("#event").textContent();
    assert.ok(event.includes(`${rec.players[(k - 1) % 2].name} (seat ${(k - 1) % 2}) takes ${m.take} from heap ${m.heap}`), event);
  }
  assert.equal(await page.locator("#next").isDisabled(), true, "the end");
  const event = await page.locator("#event").textContent();
  assert.ok(event.includes(`game over: ${rec.players[rec.winner].name} wins`), event);
  if (rec.fault) {
    const fault = await page.locator("#fault").textContent();
    assert.equal(await page.locator("#fault").isVisible(), true);
    assert.ok(fault.includes(rec.players[rec.fault.seat].name) && fault.includes(rec.fault.kind) && fault.includes(rec.fault.detail), fault);
    assert.ok(event.includes("faulted"), event);
  } else {
    assert.equal(await page.locator("#fault").isVisible(), false);
    assert.ok(event.includes("took the last object"), event);
    assert.deepEqual(await heaps(), rec.heaps.map(() => 0), "every heap empty");
  }
  for (let k = moves - 1; k >= 0; k--) {
    await page.click("#prev");
    assert.deepEqual(await heaps(), want[k], `game ${n}, back to move ${k}`);
  }
  assert.equal(await page.locator("#fault").isVisible(), false, "the fault only at the end");
}

test("a game opened by address re-plays its record heap by heap, fault and winner at the end", async () => {
  // A game ended by the last object, and one ended by a fault after at least one move.
  const clean = results.find((r) => !record(r.match).fault && record(r.match).moves.length >= 2);
  const faulted = results.find((r) => record(r.match).fault && record(r.match).moves.length >= 1);
  assert.ok(clean && faulted, "both kinds of game were played");
  for (const r of [clean, faulted]) {
    await withPage("#" + r.match, async (page) => {
      await page.waitForSelector(`body[data-open="${r.match}"]`);
      assert.equal(await page.locator("#current").textContent(), `game ${r.match}`);
      await stepThrough(page, r.match);
    });
  }
});

test("a click opens a game of the hostile name, shown as text, and back returns to the list", async () => {
  const r = results.find((x) => x.result.names.includes(hostile));
  await withPage("", async (page) => {
    await page.click(`#matches tbody tr[data-n="${r.match}"] td:nth-child(2)`);
    await page.waitForSelector(`body[data-open="${r.match}"]`);
    assert.equal(await page.locator("#viewer").isVisible(), true);
    const players = await page.locator("#players").textContent();
    assert.ok(players.includes(hostile), players);
    await stepThrough(page, r.match);
    await page.click("#back");
    await page.waitForSelector("#matches:not([hidden])");
  });
});
