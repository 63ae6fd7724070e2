// Headless-Chromium test of the Bomberman replay viewer (games/src/bomberman/viewer.html).
//
// Usage: node viewer.test.mjs <viewer.html> <expected.json>
//   expected.json: {"names": [...], "ranks": [...], "frames": [{"t": 0, "players": [{"x","y","alive"}]}, ...]}
//   or the viewer data itself (names and ranks are then read from its result).
// Env: CHROMIUM (default /usr/bin/chromium); VIEWER_SCREENSHOTS=<dir> saves PNGs of a few frames.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium } from "playwright-core";

const [htmlArg, expectedArg] = process.argv.slice(2);
if (!htmlArg || !expectedArg) {
  console.error("usage: node viewer.test.mjs <viewer.html> <expected.json>");
  process.exit(2);
}
const htmlPath = resolve(htmlArg);
const raw = JSON.parse(readFileSync(resolve(expectedArg), "utf8"));
const expected = raw.result
  ? { names: raw.result.names ?? raw.meta.names, ranks: raw.result.ranks, frames: raw.frames }
  : raw;
const shots = process.env.VIEWER_SCREENSHOTS;

const posKey = (players) => players.map((p) => `${p.x},${p.y},${p.alive ? 1 : 0}`).join(";");

test(`viewer ${htmlArg}`, async (t) => {
  const profile = mkdtempSync(join(tmpdir(), "viewer-chromium-"));
  // A fresh profile directory per run (playwright passes it as --user-data-dir).
  const errors = [];
  const requests = [];
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
    page.on("request", (r) => { if (!r.url().startsWith("file:") && !r.url().startsWith("data:")) requests.push(r.url()); });
    await page.goto(pathToFileURL(htmlPath).href);
    await page.waitForSelector("body[data-ready=true]", { timeout: 30000 });

    const embedded = await page.evaluate(() => JSON.parse(document.getElementById("replay-data").textContent));
    const frames = expected.frames ?? embedded.frames ?? [];
    const F = frames.length;
    const n = expected.names.length;
    const at = async () => {
      const s = await page.evaluate(() => {
      const turn = document.getElementById("turn"), cv = document.getElementById("board");
      return {
        index: Number(turn.dataset.index), turn: Number(turn.dataset.turn), text: turn.textContent,
        players: cv.dataset.players, image: cv.toDataURL(),
        events: document.querySelectorAll("#events li:not(.none)").length,
        finalVisible: !document.getElementById("final").hidden,
      };
      });
      s.image = createHash("sha256").update(s.image).digest("hex"); // the board picture, by hash
      return s;
    };
    const checkFrame = (s, k) => {
      assert.equal(s.index, k, "frame index");
      if (k === 0) {
        assert.equal(s.text, "Start");
        assert.equal(s.players, posKey(embedded.initial?.players ?? []), "initial positions on the board");
      } else {
        const f = frames[k - 1];
        assert.equal(s.turn, f.t, `turn of frame ${k}`);
        assert.match(s.text, new RegExp(`^Turn ${f.t}\\b`));
        assert.equal(s.players, posKey(f.players), `positions drawn at frame ${k}`);
        if (embedded.frames?.[k - 1]) assert.equal(s.events, embedded.frames[k - 1].events.length, `events listed at frame ${k}`);
      }
      assert.equal(s.finalVisible, k === F, "final table shown exactly at the end");
    };

    await t.test("opens on the initial position", async () => {
      assert.equal(await page.locator("#slider").getAttribute("max"), String(F));
      checkFrame(await at(), 0);
      // A replay that could not be re-simulated says so on the page.
      const banner = await page.locator("#error").isVisible();
      assert.equal(banner, Boolean(embedded.error), "error banner shown exactly when the data has an error");
      if (embedded.error) assert.match(await page.locator("#error").textContent(), /could not be fully re-simulated/);
      if (shots) await page.screenshot({ path: join(shots, "viewer-start.png"), fullPage: true });
    });

    await t.test("steps forward and back with the buttons", async () => {
      const m = Math.min(4, F);
      const seen = [await at()];
      for (let k = 1; k <= m; k++) {
        await page.click("#next");
        const s = await at();
        checkFrame(s, k);
        const a = k === 1 ? embedded.initial?.players ?? [] : frames[k - 2].players;
        const b = frames[k - 1];
        const changed = posKey(a) !== posKey(b.players) || JSON.stringify(embedded.frames[k - 1].bombs) !== JSON.stringify(k === 1 ? [] : embedded.frames[k - 2].bombs);
        if (changed) assert.notEqual(s.image, seen[k - 1].image, `board picture changes from frame ${k - 1} to ${k}`);
        seen.push(s);
      }
      for (let k = m - 1; k >= 0; k--) {
        await page.click("#prev");
        const s = await at();
        checkFrame(s, k);
        assert.equal(s.image, seen[k].image, `frame ${k} looks the same when revisited`);
      }
      assert.equal(await page.locator("#prev").isDisabled(), true, "prev disabled at the start");
    });

    await t.test("keyboard: arrows step, space plays and pauses", async () => {
      await page.locator("body").click({ position: { x: 5, y: 5 } });
      await page.keyboard.press("ArrowRight");
      checkFrame(await at(), Math.min(1, F));
      await page.keyboard.press("ArrowLeft");
      checkFrame(await at(), 0);
      if (F > 0) {
        await page.selectOption("#speed", "40");
        await page.locator("body").click({ position: { x: 5, y: 5 } });
        await page.keyboard.press(" ");
        await page.waitForFunction(() => Number(document.getElementById("turn").dataset.index) > 0, null, { timeout: 15000 });
        await page.keyboard.press(" ");
        assert.equal(await page.locator("#play").getAttribute("data-playing"), "false");
        const s = await at();
        await page.waitForTimeout(200);
        assert.equal((await at()).index, s.index, "paused playback stays on its frame");
        checkFrame(s, s.index);
      }
    });

    await t.test("every frame renders (slider) and matches the data", async () => {
      const got = await page.evaluate((count) => {
        const sl = document.getElementById("slider"), out = [];
        for (let k = 0; k <= count; k++) {
          sl.value = String(k);
          sl.dispatchEvent(new Event("input"));
          const turn = document.getElementById("turn");
          out.push([Number(turn.dataset.index), Number(turn.dataset.turn), document.getElementById("board").dataset.players]);
        }
        return out;
      }, F);
      got.forEach(([index, turn, players], k) => {
        assert.equal(index, k);
        if (k > 0) {
          assert.equal(turn, frames[k - 1].t, `turn at frame ${k}`);
          assert.equal(players, posKey(frames[k - 1].players), `positions at frame ${k}`);
        }
      });
      if (shots && F > 2) {
        const mid = frames.findIndex((f, i) => i >= F / 3 && f.bombs?.length) + 1 || Math.floor(F / 2);
        await page.evaluate((k) => { const sl = document.getElementById("slider"); sl.value = String(k); sl.dispatchEvent(new Event("input")); }, mid);
        await page.screenshot({ path: join(shots, "viewer-mid.png"), fullPage: true });
      }
    });

    await t.test("the last frame shows the final ranks", async () => {
      // With no frames at all the start is also the end and both buttons are disabled.
      const go = async (id, k) => {
        if (F === 0) assert.equal(await page.locator(id).isDisabled(), true, `${id} disabled in an empty game`);
        else await page.click(id);
        checkFrame(await at(), k);
      };
      await go("#first", 0);
      await go("#last", F);
      const rows = await page.$$eval("#final-ranks tr[data-player]", (trs) => trs.map((tr) => ({
        player: Number(tr.dataset.player), rank: Number(tr.querySelector(".c-rank").textContent),
        name: tr.querySelector(".c-name .nm").textContent,
      })));
      assert.equal(rows.length, n, "one row per player");
      for (const r of rows) {
        assert.equal(r.name, expected.names[r.player], `name of player ${r.player}`);
        assert.equal(r.rank, expected.ranks[r.player], `rank of player ${r.player}`);
      }
      const ranks = rows.map((r) => r.rank);
      assert.deepEqual(ranks, [...ranks].sort((a, b) => a - b), "rows ordered by rank");
      if (shots) await page.screenshot({ path: join(shots, "viewer-final.png"), fullPage: true });
    });

    await t.test("no console errors, page errors or network requests", () => {
      assert.deepEqual(errors, []);
      assert.deepEqual(requests, []);
    });
  } finally {
    await browser?.close();
    rmSync(profile, { recursive: true, force: true });
  }
});
