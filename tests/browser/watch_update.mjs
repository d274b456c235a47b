// watch_update.mjs: opens an update's page in headless Chromium and watches
// it, without reloading, until it reaches a terminal status.
//
//   node watch_update.mjs URL EXPECTED_STATUS SCREENSHOT_DIR
//
// Prints one JSON line: the statuses seen in order, the final instance
// states (one letter per instance, see webui/app.js), whether the page was
// reloaded, the screenshots written, the requests that failed (4xx/5xx),
// the outline drawn around <main> on load, each "Current batch" text seen and
// the final progress bar (its segment's class, colour and the fraction of
// the bar it fills), the timeline (each count of works its chart drew while
// the update ran, what it drew at the end and what /ui/api/timeline says
// then, in the chart's own form), and the panel
// shown once the first instance is clicked. Exits 0 when the page reached
// EXPECTED_STATUS without a reload, 1 otherwise, 2 on bad usage.
import { launch, watchedPage } from './chromium.mjs';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [url, expected, shots] = process.argv.slice(2);
if (!url || !expected || !shots) {
  console.error('usage: node watch_update.mjs URL EXPECTED_STATUS SCREENSHOT_DIR');
  process.exit(2);
}
mkdirSync(shots, { recursive: true });

const TERMINAL = new Set(['ROLLED_FORWARD', 'ROLLED_BACK', 'ABORTED', 'ERROR', 'FAILED']);
const result = {
  seen: [], states: '', reloaded: false, screenshots: [], errors: [], failed_requests: [],
  main_outline: '', batches: [], bar: null, update_events: [], instance_panel: '', log_link: '',
  timeline_works: [], timeline_page: '', timeline_api: '', timeline_batches: 0,
};
let code = 1;
let browser = null;
try {
  browser = await launch();
  const page = await watchedPage(browser, result, true);
  let loads = 0;
  page.on('load', () => { loads++; });
  await page.goto(url);
  await page.waitForSelector('.facts .badge');
  await page.waitForTimeout(300);
  result.main_outline = await page.evaluate(() => {
    const m = document.getElementById('main');
    return (document.activeElement === m ? 'focused ' : '') + getComputedStyle(m).outlineStyle;
  });
  // Tells the test the page is up (it may hold the update until then).
  writeFileSync(join(shots, 'loaded'), '');
  // A marker that only survives if the page is never reloaded.
  await page.evaluate(() => { window.__staggerMarker = 1; });

  const deadline = Date.now() + 90000;
  let status = '';
  let shot = 0;
  while (Date.now() < deadline) {
    const now = await page.evaluate(() => {
      const b = document.querySelector('.facts .badge');
      return b ? b.classList[1] : '';
    });
    if (now && now !== status) {
      status = now;
      result.seen.push(status);
      const file = join(shots, `${String(++shot).padStart(2, '0')}-${status}.png`);
      await page.screenshot({ path: file, fullPage: true });
      result.screenshots.push(file);
    }
    const batch = await page.evaluate(() => {
      const dt = [...document.querySelectorAll('.facts dt')].find((d) => d.textContent === 'Current batch');
      return dt ? dt.nextElementSibling.textContent : '';
    });
    if (batch && !result.batches.includes(batch)) result.batches.push(batch);
    const works = await page.evaluate(() => {
      const c = document.querySelector('canvas.timeline-chart');
      return c ? Number(c.dataset.works) : 0;
    });
    if (works && !result.timeline_works.includes(works)) result.timeline_works.push(works);
    if (TERMINAL.has(status)) break;
    await page.waitForTimeout(100);
  }
  // The page keeps refreshing for a moment after the last change.
  await page.waitForTimeout(500);
  result.states = await page.evaluate(() => {
    const c = document.querySelector('canvas.grid');
    return c ? c.dataset.states : '';
  });
  // The chart as drawn, and the daemon's timeline in the chart's form.
  Object.assign(result, await page.evaluate(async () => {
    const c = document.querySelector('canvas.timeline-chart');
    const [, role, env, name, id] = location.hash.slice(2).split('/').map(decodeURIComponent);
    const q = new URLSearchParams({ role, environment: env, name, id });
    const t = await (await fetch('/ui/api/timeline?' + q.toString())).json();
    return {
      timeline_page: c ? c.dataset.phases : '',
      timeline_api: t.instances.map((w) => w.instance + (w.back ? 'b' : '') + ':' +
        w.phases.map((p) => p.phase + '@' + p.from_ms + '-' + p.to_ms).join(',')).join(';'),
      timeline_batches: document.querySelectorAll('table.timeline-batches tbody tr').length,
      predicted_page: (document.querySelector('p.timeline-prediction') || { dataset: {} }).dataset
        .predicted || 'none',
      predicted_api: String(t.predicted_ms),
    };
  }));
  result.update_events = await page.evaluate(() =>
    [...document.querySelectorAll('ol.update-events li')].map((li) => li.textContent));
  // Its conditions, as "Type=Status/Reason".
  result.conditions = await page.evaluate(() =>
    [...document.querySelectorAll('.facts .condition')].map((c) =>
      c.dataset.condition + '=' + c.dataset.status + '/' + c.dataset.reason));
  result.bar = await page.evaluate(() => {
    const s = document.querySelector('main .bar > span');
    const drawn = (e) => e.getBoundingClientRect().width;
    return s ? { class: s.className, color: getComputedStyle(s).backgroundColor, width: s.style.width,
      fraction: drawn(s) / drawn(s.parentElement) } : null;
  });
  // Picks the first instance of the grid: its panel shows its events,
  // why it last failed and the end of its output.
  const grid = await page.$('canvas.grid');
  if (grid) {
    await grid.click({ position: { x: 4, y: 4 } });
    try {
      await page.waitForSelector('#instance-panel h3', { timeout: 10000 });
      await page.waitForTimeout(300);
      result.instance_panel = await page.evaluate(() => document.getElementById('instance-panel').innerText);
      result.log_link = await page.evaluate(() => {
        const a = document.querySelector('#instance-panel h4 a');
        return a ? a.getAttribute('href') : '';
      });
    } catch (e) {
      result.errors.push('the instance panel did not appear: ' + e);
    }
  }
  result.reloaded = loads > 1 || !(await page.evaluate(() => window.__staggerMarker === 1));
  const final = join(shots, 'final.png');
  await page.screenshot({ path: final, fullPage: true });
  result.screenshots.push(final);
  if (status === expected && !result.reloaded && result.errors.length === 0) code = 0;
} catch (e) {
  result.errors.push(String(e));
} finally {
  if (browser) await browser.close();
}
console.log(JSON.stringify(result));
process.exit(code);
