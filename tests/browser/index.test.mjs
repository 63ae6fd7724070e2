// Headless-Chromium test of a tournament's viewer index (replays/index.html, written by
// `farm run` / `farm report`; games/src/bomberman/viewer_index.html).
//
// Usage: node index.test.mjs <index.html> <expected.json>
//   expected.json: [{"n": 1, "names": [...], "ranks": [...], "frames": 123, "data": {...}}, ...]:
//   every match the page must open, with its seats, ranks and number of frames (turns played),
//   and optionally the viewer data the page must hand the viewer (unpacked exactly).
// Opens the page from disk, checks the list, opens matches by address (#N) and by click, steps
// the viewer inside (the board is drawn and changes), and requires no console errors, page
// errors or network requests. The page reads only files beside it: its list (index.js) and the
// data file (NNNNN.js) of each match opened, when it is opened; never a replay.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium } from "playwright-core";

const [htmlArg, expectedArg] = process.argv.slice(2);
if (!htmlArg || !expectedArg) {
  console.error("usage: node index.test.mjs <index.html> <expected.json>");
  process.exit(2);
}
const url = pathToFileURL(resolve(htmlArg)).href;
const expected = JSON.parse(readFileSync(resolve(expectedArg), "utf8"));

test(`viewer index ${htmlArg}`, async (t) => {
  const profile = mkdtempSync(join(tmpdir(), "index-chromium-"));
  const errors = [];
  const requests = [];
  const files = [];
  let browser;
  try {
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
      headless: true,
      viewport: { width: 1400, height: 900 },
      args: [
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
      ],
    });
    const page = browser.pages()[0] ?? (await browser.newPage());
    page.on("console", (m) => { if (m.type() === "error" || m.type() === "warning") errors.push(`console ${m.type()}: ${m.text()}`); });
    page.on("pageerror", (e) => errors.push(`page error: ${e.message}`));
    page.on("dialog", (d) => { errors.push(`dialog ${d.type()}: ${d.message()}`); d.dismiss().catch(() => {}); });
    page.on("request", (r) => {
      if (r.url().startsWith("file:")) files.push(r.url());
      else if (!r.url().startsWith("data:") && !r.url().startsWith("about:")) requests.push(r.url());
    });

    // The viewer inside the page, once it has drawn match n.
    const viewer = async (n) => {
      await page.waitForSelector(`body[data-open="${n}"]`, { timeout: 30000 });
      const frame = page.frameLocator("#viewer");
      await frame.locator("body[data-ready=true]").waitFor({ timeout: 30000 });
      return frame;
    };
    const check = async (m, frame) => {
      assert.equal(await frame.locator("#slider").getAttribute("max"), String(m.frames), `match ${m.n}: frames`);
      assert.equal(await frame.locator("#turn").textContent(), "Start");
      const board = frame.locator("#board");
      const picture = () => board.evaluate((c) => c.toDataURL());
      const blank = await board.evaluate((c) => Object.assign(document.createElement("canvas"), { width: c.width, height: c.height }).toDataURL());
      const start = await picture();
      assert.notEqual(start, blank, `match ${m.n}: the board is drawn`);
      await frame.locator("#last").click();
      assert.notEqual(await frame.locator("#turn").textContent(), "Start", `match ${m.n}: the last turn shown`);
      assert.notEqual(await picture(), start, `match ${m.n}: the board changes by the last turn`);
      const rows = await frame.locator("#final-ranks tr[data-player]").evaluateAll((trs) => trs.map((tr) => ({
        player: Number(tr.dataset.player), rank: Number(tr.querySelector(".c-rank").textContent),
        name: tr.querySelector(".c-name .nm").textContent,
      })));
      assert.equal(rows.length, m.names.length, `match ${m.n}: one row per seat`);
      for (const r of rows) {
        assert.equal(r.name, m.names[r.player], `match ${m.n}: name of seat ${r.player}`);
        assert.equal(r.rank, m.ranks[r.player], `match ${m.n}: rank of seat ${r.player}`);
      }
      assert.equal(await frame.locator("#error").isVisible(), false, `match ${m.n}: no error banner`);
      if (m.data) {
        const got = JSON.parse(await frame.locator("#replay-data").textContent());
        assert.deepStrictEqual(got, m.data, `match ${m.n}: the viewer gets exactly its viewer data`);
      }
    };

    await t.test("lists every match", async () => {
      await page.goto(url);
      await page.waitForSelector("body[data-ready=true]", { timeout: 30000 });
      const listed = await page.$$eval("#matches tbody tr", (trs) => trs.map((tr) => Number(tr.dataset.n)));
      for (const m of expected) assert.ok(listed.includes(m.n), `match ${m.n} listed`);
      assert.equal(await page.locator("#viewer").isVisible(), false, "no match open without #N");
    });

    await t.test("opens each match from its address (#N)", async () => {
      for (const m of expected) {
        await page.goto(`${url}#${m.n}`);
        await check(m, await viewer(m.n));
      }
    });

    await t.test("opens a match by click, goes back to the list, and reacts to the address", async () => {
      await page.goto(url);
      await page.waitForSelector("body[data-ready=true]");
      const [a, b] = [expected[0], expected[expected.length - 1]];
      await page.click(`#matches tbody tr[data-n="${a.n}"] td:nth-child(3)`);
      await check(a, await viewer(a.n));
      assert.ok(page.url().endsWith(`#${a.n}`), page.url());
      await page.click("#back");
      await page.waitForSelector("#matches", { state: "visible" });
      assert.equal(await page.locator("#viewer").isVisible(), false);
      await page.evaluate((n) => { location.hash = "#" + n; }, b.n);
      await check(b, await viewer(b.n));
      const missing = Math.max(...expected.map((m) => m.n)) + 1000;
      await page.evaluate((n) => { location.hash = "#" + n; }, missing);
      await page.waitForSelector("#error", { state: "visible" });
      assert.match(await page.locator("#error").textContent(), new RegExp(`match ${missing}`));
      // The error is the page's own message, not a console error.
    });

    await t.test("no console errors, page errors or network requests", () => {
      assert.deepEqual(errors, []);
      assert.deepEqual(requests, []);
    });

    await t.test("reads only its list and the data files of the matches opened, beside it", () => {
      const dir = url.slice(0, url.lastIndexOf("/") + 1);
      const names = new Set(files.map((f) => { assert.ok(f.startsWith(dir), f); return f.slice(dir.length).replace(/#.*$/, ""); }));
      const data = [...names].filter((f) => /^\d{5,}\.js$/.test(f)).sort();
      const opened = expected.map((m) => String(m.n).padStart(5, "0") + ".js").sort();
      assert.deepEqual(data, opened, "one data file per match opened");
      assert.deepEqual([...names].filter((f) => !data.includes(f)).sort(), ["index.html", "index.js"]);
    });
  } finally {
    await browser?.close();
    rmSync(profile, { recursive: true, force: true });
  }
});
