// Headless-Chromium test of a 钳王 run's viewer index, replays/index.html, opened from disk
// (file://, no server): every match of results.json is listed, and a match opened by address
// (#N) or by click shows its record on the board: the start position (6 pieces a side), one
// step per ply of the record, and the outcome at the last ply.
//
// Usage: node qianwang-index.test.mjs <run folder>
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

const [dirArg] = process.argv.slice(2);
if (!dirArg) {
  console.error("usage: node qianwang-index.test.mjs <run folder>");
  process.exit(2);
}
const dir = resolve(dirArg);
const require = createRequire(join(resolve(process.env.REPORT_PW_ROOT || "."), "package.json"));
const { chromium } = require("playwright-core");
const results = JSON.parse(readFileSync(join(dir, "results.json"), "utf8"));
const replays = pathToFileURL(join(dir, "replays")).href + "/";
const record = (n) => JSON.parse(gunzipSync(readFileSync(join(dir, "replays", String(n).padStart(5, "0") + ".json.gz"))).toString());

async function withPage(hash, fn) {
  const profile = mkdtempSync(join(tmpdir(), "qianwang-index-"));
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
    page.on("request", (r) => {
      const u = r.url();
      if (!(u.startsWith(replays) && /^(index\.html(#.*)?|index\.js|\d{5,}\.js)$/.test(u.slice(replays.length)))) foreign.push(u);
    });
    await page.goto(replays + "index.html" + hash, { waitUntil: "load" });
    await page.waitForSelector("body[data-ready=true]");
    await fn(page);
    assert.deepEqual(errors, [], "no console or page errors");
    assert.deepEqual(foreign, [], "no request besides the page and its files");
  } finally {
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

test("every match is listed with its players and result", async () => {
  await withPage("", async (page) => {
    const rows = await page.locator("#matches tbody tr").evaluateAll((trs) => trs.map((tr) =>
      [...tr.children].map((td) => td.textContent)));
    assert.equal(rows.length, results.length);
    for (const [i, r] of results.entries()) {
      const [n, black, red, result, plies] = rows[i];
      assert.equal(n, "#" + r.match);
      assert.deepEqual([black, red], r.result.names);
      const [a, b] = r.result.ranks;
      assert.equal(result, a === b ? "draw" : a === 1 ? "black wins" : "red wins");
      assert.equal(Number(plies), r.result.turns);
    }
  });
});

test("a match opened by address re-plays its record on the board", async () => {
  const n = results[Math.min(4, results.length - 1)].match;
  const rec = record(n);
  await withPage("#" + n, async (page) => {
    await page.waitForSelector(`body[data-open="${n}"]`);
    assert.equal(await page.locator("#board .pt").count(), 16);
    assert.equal(await page.locator("#board .black .piece").count(), 6);
    assert.equal(await page.locator("#board .red .piece").count(), 6);
    assert.equal(await page.locator("#moves li").count(), rec.plies.length);
    assert.equal(await page.locator("#step").textContent(), `ply 0 / ${rec.plies.length}`);
    await page.click("#last");
    const event = await page.locator("#event").textContent();
    assert.ok(event.includes("game over"), event);
    const left = (side) => page.locator(`#board .${side} .piece`).count();
    const captured = (side) => rec.plies.filter((p) => p.side !== side).reduce((k, p) => k + (p.captured || []).length, 0);
    assert.equal(await left("black"), 6 - captured("black"));
    assert.equal(await left("red"), 6 - captured("red"));
  });
});

test("a click on a match opens it and the back button returns to the list", async () => {
  const n = results[0].match;
  await withPage("", async (page) => {
    await page.click(`#matches tbody tr[data-n="${n}"] td:nth-child(2)`);
    await page.waitForSelector(`body[data-open="${n}"]`);
    assert.equal(await page.locator("#viewer").isVisible(), true);
    await page.click("#back");
    await page.waitForSelector("#matches:not([hidden])");
  });
});
