// Headless-Chromium test of the ladder's pages, against a running `farm ladder serve`.
//
// Usage: node ladder.test.mjs <base-url> <expected.json>
//   expected.json: {"leaderboard": [{botId, name, rp, elo, tier}], "matches": [{urlId, plies, initialBoard, winner, reason}]}
// Env: LADDER_PW_ROOT = folder whose node_modules has playwright-core (tests/browser);
//      CHROMIUM (default /usr/bin/chromium); LADDER_SCREENSHOTS=<dir> keeps PNGs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const [base, expectedArg] = process.argv.slice(2);
if (!base || !expectedArg) {
  console.error("usage: node ladder.test.mjs <base-url> <expected.json>");
  process.exit(2);
}
const require = createRequire(join(resolve(process.env.LADDER_PW_ROOT || "."), "package.json"));
const { chromium } = require("playwright-core");
const expected = JSON.parse(readFileSync(resolve(expectedArg), "utf8"));
const shots = process.env.LADDER_SCREENSHOTS;

function boardsOf(m) {
  const out = [m.initialBoard.map((c) => c.slice())];
  let b = m.initialBoard.map((c) => c.slice());
  for (const p of m.plies) {
    if (p.move) {
      b[p.move.to[0]][p.move.to[1]] = b[p.move.from[0]][p.move.from[1]];
      b[p.move.from[0]][p.move.from[1]] = null;
    }
    for (const [x, y] of p.captured) b[x][y] = null;
    out.push(b.map((c) => c.slice()));
  }
  return out;
}

async function withPage(fn) {
  const profile = mkdtempSync(join(tmpdir(), "ladder-chromium-"));
  const errors = [];
  const foreign = [];
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    viewport: { width: 1200, height: 900 },
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
      "--disable-component-update", "--disable-sync"],
  });
  try {
    const page = browser.pages()[0] ?? (await browser.newPage());
    page.on("console", (m) => { if (m.type() === "error") errors.push(`console: ${m.text()}`); });
    page.on("pageerror", (e) => errors.push(`page error: ${e.message}`));
    page.on("request", (r) => { if (!r.url().startsWith(base)) foreign.push(r.url()); });
    await fn(page);
    assert.deepEqual(errors, [], "no page errors");
    assert.deepEqual(foreign, [], "no requests outside the ladder");
  } finally {
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

test("leaderboard page lists every bot in order with its tier, RP and Elo", async () => {
  await withPage(async (page) => {
    await page.goto(base + "/");
    await page.waitForSelector("body[data-ready=true]", { timeout: 30000 });
    const rows = await page.$$eval("#board tbody tr", (trs) => trs.map((tr) => ({
      botId: Number(tr.dataset.botId),
      name: tr.querySelector(".name").textContent,
      rp: Number(tr.querySelector(".rp").textContent),
      elo: Number(tr.querySelector(".elo").textContent),
      tier: tr.querySelector(".tier").textContent,
    })));
    assert.equal(rows.length, expected.leaderboard.length);
    expected.leaderboard.forEach((p, i) => {
      assert.equal(rows[i].botId, p.botId);
      assert.equal(rows[i].name, p.name);
      assert.equal(rows[i].rp, p.rp);
      assert.equal(rows[i].elo, p.elo);
      assert.ok(rows[i].tier.includes(p.tier.name) && rows[i].tier.includes(p.tier.nameZh), rows[i].tier);
    });
    if (shots) await page.screenshot({ path: join(shots, "leaderboard.png"), fullPage: true });
  });
});

for (const [i, m] of expected.matches.entries()) {
  test(`replay ${m.urlId}: every ply forward and back, captures highlighted, result shown`, async () => {
    const boards = boardsOf(m);
    await withPage(async (page) => {
      await page.goto(base + "/match/" + m.urlId);
      await page.waitForSelector("body[data-ready=true]", { timeout: 30000 });
      const state = () => page.evaluate(() => {
        const cells = {};
        const captured = [];
        for (const d of document.querySelectorAll("#board .pt")) {
          cells[d.dataset.x + "," + d.dataset.y] = d.dataset.cell || null;
          if (d.classList.contains("captured")) captured.push([Number(d.dataset.x), Number(d.dataset.y)]);
        }
        return { step: Number(document.getElementById("step").dataset.step), cells, captured,
          event: document.getElementById("event").textContent };
      });
      const check = async (k) => {
        const s = await state();
        assert.equal(s.step, k);
        for (let x = 0; x < 4; x++) for (let y = 0; y < 4; y++) {
          assert.equal(s.cells[x + "," + y], boards[k][x][y], `ply ${k} point ${x},${y}`);
        }
        const want = k > 0 ? m.plies[k - 1].captured : [];
        assert.deepEqual(s.captured.map(String).sort(), want.map(String).sort(), `captures at ply ${k}`);
        if (k > 0 && want.length) assert.match(s.event, /captures/);
      };
      await check(0);
      for (let k = 1; k <= m.plies.length; k++) {
        await page.click("#next");
        await check(k);
      }
      assert.ok(await page.$eval("#next", (b) => b.disabled));
      const end = await state();
      assert.match(end.event, /game over/);
      for (let k = m.plies.length - 1; k >= Math.max(0, m.plies.length - 5); k--) {
        await page.click("#prev");
        await check(k);
      }
      await page.keyboard.press("Home");
      await check(0);
      await page.keyboard.press("End");
      await check(m.plies.length);
      const res = await page.$eval("#result", (e) => ({ text: e.textContent, winner: e.dataset.winner, reason: e.dataset.reason }));
      assert.equal(res.winner, m.winner ?? "draw");
      assert.equal(res.reason, m.reason);
      assert.match(res.text, new RegExp(m.reason));
      if (shots) await page.screenshot({ path: join(shots, `replay-${i}.png`), fullPage: true });
    });
  });
}

test("replay page of an unknown match says so", async () => {
  await withPage(async (page) => {
    page.removeAllListeners("console"); // the 404 fetch logs a console error by design
    await page.goto(base + "/match/nope");
    await page.waitForSelector("body[data-ready=true]", { timeout: 30000 });
    const t = await page.$eval("#result", (e) => e.textContent);
    assert.match(t, /could not load match nope/);
  });
});
