// Screenshot of a run's report.html (for docs/report.png): the page from disk in headless
// Chromium, from the top down to the match list.
//
// Usage: node tools/report-screenshot.mjs <run folder> <out.png>
// Needs tools/install-browser.sh (playwright-core in tests/browser, /usr/bin/chromium or $CHROMIUM).
import { createRequire } from "node:module";
import { join, resolve, dirname } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const [dir, out] = process.argv.slice(2);
if (!dir || !out) {
  console.error("usage: node tools/report-screenshot.mjs <run folder> <out.png>");
  process.exit(2);
}
const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(join(root, "tests/browser/package.json"));
const { chromium } = require("playwright-core");
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu"],
});
const page = await browser.newPage({ viewport: { width: 1000, height: 800 } });
await page.goto(pathToFileURL(join(resolve(dir), "report.html")).href);
const bottom = await page.evaluate(() => {
  const h = [...document.querySelectorAll("h2")].find((e) => e.textContent === "Matches");
  return Math.ceil(h.getBoundingClientRect().top + window.scrollY) - 4;
});
const width = await page.evaluate(() => document.documentElement.scrollWidth);
await page.screenshot({ path: out, clip: { x: 0, y: 0, width, height: bottom }, fullPage: true });
await browser.close();
