// visit_pages.mjs: opens each page of the web UI named on the command line
// in headless Chromium, each in a fresh tab, and records what went wrong.
//
//   node visit_pages.mjs BASE_URL SCREENSHOT_DIR HASH...
//
// Prints one JSON line: for each page its hash, its heading (main h1), the
// console errors and page errors it raised and the requests that failed
// (4xx/5xx), and its screenshot's file. Exits 0 when every page showed a
// heading without an error, 1 otherwise, 2 on bad usage.
import { launch, watchedPage } from './chromium.mjs';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

const [base, shots, ...hashes] = process.argv.slice(2);
if (!base || !shots || hashes.length === 0) {
  console.error('usage: node visit_pages.mjs BASE_URL SCREENSHOT_DIR HASH...');
  process.exit(2);
}
mkdirSync(shots, { recursive: true });

const result = { pages: [] };
let code = 0;
let browser = null;
try {
  browser = await launch();
  for (const [i, hash] of hashes.entries()) {
    const seen = { hash, heading: '', errors: [], failed_requests: [], screenshot: '' };
    const page = await watchedPage(browser, seen);
    try {
      await page.goto(base + '/' + hash);
      await page.waitForSelector('main h1', { timeout: 20000 });
      // Its reads done (the change feed stays open: no network idle).
      await page.waitForTimeout(800);
      seen.heading = await page.evaluate(() => document.querySelector('main h1').textContent);
      seen.screenshot = join(shots, `${String(i + 1).padStart(2, '0')}-${hash.replace(/[^a-z]+/g, '-')}.png`);
      await page.screenshot({ path: seen.screenshot, fullPage: true });
    } catch (e) {
      seen.errors.push(String(e));
    }
    if (!seen.heading || seen.errors.length || seen.failed_requests.length) code = 1;
    result.pages.push(seen);
    await page.close();
  }
} catch (e) {
  result.pages.push({ hash: '', errors: [String(e)] });
  code = 1;
} finally {
  if (browser) await browser.close();
}
console.log(JSON.stringify(result));
process.exit(code);
