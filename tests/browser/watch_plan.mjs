// watch_plan.mjs: opens a rollout plan's page in headless Chromium and works
// it as a person would, without reloading: clicks Approve on the stage that
// waits for approval, then, once the plan is DONE, Roll back (accepting the
// confirmation), and watches until the plan is ROLLED_BACK.
//
//   node watch_plan.mjs URL SCREENSHOT_DIR
//
// Prints one JSON line: the plan's statuses seen in order (with the plan's
// conditions as the page showed them at each), each stage's statuses seen,
// at the end each stage's status, the colour of its left edge, the links to
// its updates, its conditions and its readiness, the plan's timeline (each
// stage's statuses as drawn, and as /ui/api/plan's events give them), the first row of the Plans
// page
// afterwards, the controls clicked, the requests
// that failed (4xx/5xx), errors, whether the page was reloaded and the
// screenshots written. Exits 0 when the plan reached ROLLED_BACK without a
// reload, 1 otherwise, 2 on bad usage.
import { launch, watchedPage } from './chromium.mjs';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

const [url, shots] = process.argv.slice(2);
if (!url || !shots) {
  console.error('usage: node watch_plan.mjs URL SCREENSHOT_DIR');
  process.exit(2);
}
mkdirSync(shots, { recursive: true });

const result = {
  seen: [], conditions_seen: {}, stages_seen: {}, stages: [], list: '', clicked: [],
  reloaded: false, screenshots: [], errors: [], failed_requests: [],
};

let code = 1;
let browser = null;
try {
  browser = await launch();
  const page = await watchedPage(browser, result, true);
  page.on('dialog', (d) => d.accept());
  let loads = 0;
  page.on('load', () => { loads++; });
  await page.goto(url);
  await page.waitForSelector('ol.stages li.stage');
  await page.evaluate(() => { window.__staggerMarker = 1; });
  // The page draws itself anew on every change, so a button found may be
  // gone by the time it is clicked: such a click is tried again next round.
  const click = async (button, name) => {
    try {
      await button.first().click({ timeout: 2000 });
      result.clicked.push(name);
    } catch (e) {
      if (!/not attached|detached|Timeout/i.test(String(e))) throw e;
    }
  };

  const deadline = Date.now() + 90000;
  let status = '';
  let shot = 0;
  while (Date.now() < deadline) {
    const now = await page.evaluate(() => {
      const b = document.querySelector('.facts .badge');
      const stages = [...document.querySelectorAll('li.stage')].map((li) => {
        const s = li.querySelector('h3 .badge');
        return { name: li.dataset.stage, status: s ? s.classList[s.classList.length - 1] : '' };
      });
      const conditions = [...document.querySelectorAll('.facts .condition')].map((c) =>
        c.dataset.condition + '=' + c.dataset.status + '/' + c.dataset.reason);
      return { plan: b ? b.classList[b.classList.length - 1] : '', stages, conditions };
    });
    for (const s of now.stages) {
      const seen = (result.stages_seen[s.name] = result.stages_seen[s.name] || []);
      if (s.status && seen[seen.length - 1] !== s.status) seen.push(s.status);
    }
    if (now.plan && now.plan !== status) {
      status = now.plan;
      result.seen.push(status);
      result.conditions_seen[status] = now.conditions;
      const file = join(shots, `${String(++shot).padStart(2, '0')}-${status}.png`);
      await page.screenshot({ path: file, fullPage: true });
      result.screenshots.push(file);
    }
    if (status === 'ROLLED_BACK') break;
    const approve = page.locator('li.stage button:text-is("Approve")');
    if (!result.clicked.includes('approve') && await approve.count() > 0) {
      await click(approve, 'approve');
    }
    if (status === 'DONE' && !result.clicked.includes('rollback')) {
      await click(page.locator('.controls button:text-is("Roll back")'), 'rollback');
    }
    await page.waitForTimeout(100);
  }
  // The page keeps refreshing for a moment after the last change.
  await page.waitForTimeout(500);
  result.stages = await page.evaluate(() => [...document.querySelectorAll('li.stage')].map((li) => {
    const s = li.querySelector('h3 .badge');
    const r = li.querySelector('.readiness');
    return {
      name: li.dataset.stage,
      status: s ? s.classList[s.classList.length - 1] : '',
      edge: getComputedStyle(li).borderLeftColor,
      links: [...li.querySelectorAll('a[href^="#/update/"]')].map((a) => a.getAttribute('href')),
      conditions: [...li.querySelectorAll('.condition')].map((c) =>
        c.dataset.condition + '=' + c.dataset.status + '/' + c.dataset.reason),
      ready: r ? r.dataset.ready + '/' + r.dataset.desired : '',
      text: li.innerText,
    };
  }));
  result.conditions = await page.evaluate(() => [...document.querySelectorAll('.facts .condition')]
    .map((c) => c.dataset.condition + '=' + c.dataset.status + '/' + c.dataset.reason));
  // The plan's timeline as drawn (each stage's statuses, without their
  // times) beside the statuses of each stage's events in /ui/api/plan.
  Object.assign(result, await page.evaluate(async () => {
    const c = document.querySelector('canvas.plan-timeline');
    const id = decodeURIComponent(location.hash.split('/')[2]);
    const p = await (await fetch('/ui/api/plan?id=' + encodeURIComponent(id))).json();
    return {
      plan_timeline: c ? c.dataset.spans : '',
      plan_timeline_statuses: c ? c.dataset.spans.replace(/@\d+-\d+/g, '') : '',
      plan_stage_events: p.stages.map((s) => s.name + ':' + p.events.filter((e) => e.stage === s.name)
        .sort((a, b) => a.ts_ms - b.ts_ms).map((e) => e.status).join(',')).join(';'),
    };
  }));
  result.reloaded = loads > 1 || !(await page.evaluate(() => window.__staggerMarker === 1));
  const final = join(shots, 'final.png');
  await page.screenshot({ path: final, fullPage: true });
  result.screenshots.push(final);
  // The Plans page lists it.
  await page.evaluate(() => { location.hash = '#/plans'; });
  // The plan's page has tables too: wait for the list's own row.
  await page.waitForFunction(() => {
    const row = document.querySelector('main table tbody tr');
    return row !== null && row.innerText.startsWith('browser');
  }, null, { timeout: 15000 }).catch(() => {});
  result.list = await page.evaluate(() => document.querySelector('main table tbody tr').innerText);
  const list = join(shots, 'plans.png');
  await page.screenshot({ path: list, fullPage: true });
  result.screenshots.push(list);
  if (status === 'ROLLED_BACK' && !result.reloaded && result.errors.length === 0) code = 0;
} catch (e) {
  result.errors.push(String(e));
} finally {
  if (browser) await browser.close();
}
console.log(JSON.stringify(result));
process.exit(code);
