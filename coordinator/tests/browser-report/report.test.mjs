// Headless-Chromium test of a run's report.html, opened from disk (file://, no server).
//
// Usage: node report.test.mjs <run folder>
//   Reads <run folder>/bt.json and results.json and checks the page against them; the match box
//   must open <run folder>/replays/index.html#N (the test puts a stand-in there if needed).
// Env: REPORT_PW_ROOT = folder whose node_modules has playwright-core (tests/browser);
//      CHROMIUM (default /usr/bin/chromium); REPORT_SCREENSHOT=<file.png> keeps a screenshot.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [dirArg] = process.argv.slice(2);
if (!dirArg) {
  console.error("usage: node report.test.mjs <run folder>");
  process.exit(2);
}
const dir = resolve(dirArg);
const require = createRequire(join(resolve(process.env.REPORT_PW_ROOT || "."), "package.json"));
const { chromium } = require("playwright-core");
const bt = JSON.parse(readFileSync(join(dir, "bt.json"), "utf8"));
const results = JSON.parse(readFileSync(join(dir, "results.json"), "utf8"));
const pageUrl = pathToFileURL(join(dir, "report.html")).href;

async function withPage(fn) {
  const profile = mkdtempSync(join(tmpdir(), "report-chromium-"));
  const errors = [];
  const foreign = [];
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    viewport: { width: 1150, height: 900 },
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
      "--disable-component-update", "--disable-sync"],
  });
  try {
    const page = browser.pages()[0] ?? (await browser.newPage());
    page.on("console", (m) => { if (m.type() === "error") errors.push(`console: ${m.text()}`); });
    page.on("pageerror", (e) => errors.push(`page error: ${e.message}`));
    // The page itself, and the viewer page its links open with the files that page reads
    // beside it: its list of matches (index.js) and the data file (NNNNN.js) of the match opened.
    const replays = pathToFileURL(join(dir, "replays")).href + "/";
    const viewerFile = (u) => u.startsWith(replays) && /^(index\.html(#.*)?|index\.js|\d{5,}\.js)$/.test(u.slice(replays.length));
    page.on("request", (r) => { if (r.url() !== pageUrl && !viewerFile(r.url())) foreign.push(r.url()); });
    await page.goto(pageUrl, { waitUntil: "load" });
    await fn(page);
    assert.deepEqual(errors, [], "no console or page errors");
    assert.deepEqual(foreign, [], "no request besides the page itself");
  } finally {
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

const near = (text, want, what) => {
  const got = parseFloat(text);
  assert.ok(Math.abs(got - want) <= 0.005 + 1e-9, `${what}: page shows ${text}, bt.json has ${want}`);
};

test("ratings and intervals equal bt.json", async () => {
  await withPage(async (page) => {
    const data = JSON.parse(await page.locator("#report-data").textContent());
    const names = Object.keys(bt.ratings);
    assert.ok(names.length >= 2, "a fit with ratings");
    const ranked = [...names].sort((a, b) => bt.ratings[b] - bt.ratings[a]);
    const rows = await page.locator("#ratings tr[data-name]").evaluateAll((trs) => trs.map((tr) => ({
      name: tr.dataset.name,
      rating: tr.querySelector(".rating").textContent,
      wald: [tr.querySelector(".wlo").textContent, tr.querySelector(".whi").textContent],
      boot: [tr.querySelector(".blo")?.textContent, tr.querySelector(".bhi")?.textContent],
      bars: tr.querySelectorAll("svg rect").length,
    })));
    assert.deepEqual(rows.map((r) => r.name), ranked, "best first, every bot");
    for (const r of rows) {
      near(r.rating, bt.ratings[r.name], `${r.name} rating`);
      near(r.wald[0], bt.ci95[r.name][0], `${r.name} Wald low`);
      near(r.wald[1], bt.ci95[r.name][1], `${r.name} Wald high`);
      near(r.boot[0], bt.bootstrap.ci95[r.name][0], `${r.name} bootstrap low`);
      near(r.boot[1], bt.bootstrap.ci95[r.name][1], `${r.name} bootstrap high`);
      assert.equal(r.bars, 2, `${r.name}: a Wald and a bootstrap bar`);
    }
    // The blob carries the exact numbers.
    for (const r of data.ratings.rows) {
      assert.equal(r.rating, bt.ratings[r.name]);
      assert.deepEqual(r.wald, bt.ci95[r.name]);
      assert.deepEqual(r.bootstrap, bt.bootstrap.ci95[r.name]);
    }
    assert.equal(data.ratings.bootstrap.units, bt.bootstrap.units);
    assert.equal(data.ratings.bootstrap.fitted, bt.bootstrap.fitted);
  });
});

test("match counts, per-size table, head to head and faults equal results.json", async () => {
  await withPage(async (page) => {
    const text = async (sel) => (await page.locator(sel).textContent()).trim();
    const invalid = results.filter((r) => !r.result.valid_for_scoring).length;
    assert.equal(Number(await text("#games")), results.length);
    assert.equal(Number(await text("#done")), results.length);
    assert.equal(Number(await text("#invalid")), invalid);
    assert.equal(Number(await text("#failed")), 0);
    // Every match linked into the viewer.
    const hrefs = await page.locator("#all-matches a").evaluateAll((as) => as.map((a) => a.getAttribute("href")));
    assert.deepEqual(hrefs, results.map((r) => `replays/index.html#${r.match}`));
    // Per size: valid games per bot.
    const want = new Map();
    for (const r of results) {
      if (!r.result.valid_for_scoring) continue;
      for (const n of new Set(r.result.names)) {
        const k = `${r.size}|${n}`;
        want.set(k, (want.get(k) || 0) + 1);
      }
    }
    const sizeRows = await page.locator("#per-size tr").evaluateAll((trs) => trs.slice(1).map((tr) =>
      [...tr.children].map((td) => td.textContent)));
    assert.equal(sizeRows.length, want.size);
    for (const [size, name, games] of sizeRows) assert.equal(Number(games), want.get(`${size}|${name}`), `${size} ${name}`);
    // Head to head: row bot strictly ahead of column bot, over valid games with both.
    const data = JSON.parse(await page.locator("#report-data").textContent());
    const h = data.head_to_head;
    const idx = (n) => h.names.indexOf(n);
    const ahead = h.names.map(() => h.names.map(() => 0));
    const together = h.names.map(() => h.names.map(() => 0));
    for (const r of results) {
      if (!r.result.valid_for_scoring) continue;
      const { names, ranks } = r.result;
      names.forEach((a, x) => names.forEach((b, y) => {
        if (a === b) return;
        together[idx(a)][idx(b)] += 1;
        if (ranks[x] < ranks[y]) ahead[idx(a)][idx(b)] += 1;
      }));
    }
    assert.deepEqual(h.ahead, ahead);
    assert.deepEqual(h.together, together);
    const cells = await page.locator("#h2h tr").evaluateAll((trs) => trs.slice(1).map((tr) =>
      [...tr.querySelectorAll("td")].map((td) => td.textContent)));
    cells.forEach((row, i) => row.forEach((cell, j) => {
      const expect = i === j || together[i][j] === 0 ? "–" : `${ahead[i][j]}/${together[i][j]}`;
      assert.equal(cell, expect, `${h.names[i]} vs ${h.names[j]}`);
    }));
    // Faults by bot and kind.
    const faults = new Map();
    for (const r of results) {
      r.result.faults.forEach((fs, seat) => fs.forEach((f) => {
        const k = `${r.result.names[seat]}|${f.kind}`;
        faults.set(k, (faults.get(k) || 0) + 1);
      }));
    }
    const faultRows = await page.locator("#faults tr").evaluateAll((trs) => trs.slice(1).map((tr) =>
      [...tr.children].slice(0, 3).map((td) => td.textContent)));
    assert.ok(faults.size > 0, "the run has faults to show");
    assert.deepEqual(new Map(faultRows.map(([b, k, c]) => [`${b}|${k}`, Number(c)])), faults);
    // Progress drawn.
    assert.equal(await page.locator("#progress-line").count(), 1);
    assert.equal(await page.locator("#throughput-line").count(), 1);
    if (process.env.REPORT_SCREENSHOT) {
      await page.screenshot({ path: process.env.REPORT_SCREENSHOT, fullPage: true });
    }
  });
});

test("a hostile bot name is text, not markup", async () => {
  await withPage(async (page) => {
    const names = Object.keys(bt.ratings);
    const hostile = names.find((n) => /[<&"]/.test(n));
    assert.ok(hostile, "the run has a name with < & or \"");
    assert.equal(await page.locator(`#ratings tr[data-name]`).evaluateAll(
      (trs, n) => trs.filter((tr) => tr.dataset.name === n).length, hostile), 1);
    assert.equal(await page.locator("#ratings b, #per-size b, #h2h b").count(), 0);
  });
});

test("the match box opens the viewer at that match", async () => {
  await withPage(async (page) => {
    await page.fill("#open-match input", "2");
    await Promise.all([page.waitForURL(/replays\/index\.html#2$/), page.click("#open-match button")]);
    assert.equal(new URL(page.url()).hash, "#2");
  });
});
