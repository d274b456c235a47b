// follow_leader.mjs: opens an update's page on the leading replica in
// headless Chromium and watches it, never reloading it by hand, while the
// test kills that leader: the page must find the new leader by itself and
// go on showing the update there until it ends.
//
//   node follow_leader.mjs URL EXPECTED_STATUS MARKER_DIR
//
// Writes MARKER_DIR/loaded once the page shows the update (the test kills
// the leader then). Prints one JSON line: the origin the page started on
// and each origin it was on later, the statuses and the instance states
// (webui/app.js's one letter per instance) seen on the last origin, the
// failover notice shown there, and the page errors. Exits 0 when the page
// reached EXPECTED_STATUS on another origin than the first, 1 otherwise,
// 2 on bad usage.
import { launch, watchedPage } from './chromium.mjs';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [url, expected, markers] = process.argv.slice(2);
if (!url || !expected || !markers) {
  console.error('usage: node follow_leader.mjs URL EXPECTED_STATUS MARKER_DIR');
  process.exit(2);
}
mkdirSync(markers, { recursive: true });

const TERMINAL = new Set(['ROLLED_FORWARD', 'ROLLED_BACK', 'ABORTED', 'ERROR', 'FAILED']);
const result = {
  first_origin: '', origins: [], seen: [], states: [], notice: '', errors: [], failed_requests: [],
};
let code = 1;
let browser = null;
try {
  browser = await launch();
  const page = await watchedPage(browser, result, true);
  await page.goto(url);
  await page.waitForSelector('.facts .badge');
  result.first_origin = new URL(page.url()).origin;
  writeFileSync(join(markers, 'loaded'), '');

  const deadline = Date.now() + 120000;
  let origin = result.first_origin;
  let status = '';
  while (Date.now() < deadline) {
    // The page may be between two documents while it moves.
    const now = await page.evaluate(() => {
      const b = document.querySelector('.facts .badge');
      const c = document.querySelector('canvas.grid');
      const n = document.getElementById('failover');
      return {
        origin: location.origin,
        status: b ? b.classList[1] : '',
        states: c ? c.dataset.states : '',
        notice: n && !n.hidden ? n.textContent : '',
      };
    }).catch(() => null);
    if (now) {
      if (now.origin !== origin) {
        origin = now.origin;
        result.origins.push(origin);
        result.seen = [];
        result.states = [];
        status = '';
      }
      if (now.status && now.status !== status) result.seen.push(now.status);
      status = now.status || status;
      if (now.states && now.states !== result.states[result.states.length - 1])
        result.states.push(now.states);
      if (now.notice) result.notice = now.notice;
      if (TERMINAL.has(status) && origin !== result.first_origin) break;
    }
    await page.waitForTimeout(100);
  }
  if (status === expected && origin !== result.first_origin) code = 0;
} catch (e) {
  result.errors.push(String(e));
} finally {
  if (browser) await browser.close();
}
console.log(JSON.stringify(result));
process.exit(code);
