// sidecar_page.mjs: rolls out a sidecar set's new image from its web page,
// as a user would, in headless Chromium.
//
//   node sidecar_page.mjs BASE_URL SET IMAGE SCREENSHOT_DIR
//
// Opens the sidecar sets' list, follows the link to SET, opens "Roll out a
// new version", types IMAGE over the image new pods get now and presses
// Apply; then waits until the page shows the set's update moving to the new
// version. Prints one JSON line: the list's and the set's headings, the
// set's facts line ("Selects ..."), the image the form offered, what a
// re-render while typing kept (the focused field's id and the image and
// message typed), the focused element after leaving the form and another
// re-render, the update's move after the apply ("v1 → v2"), the console
// errors, page errors and failed requests (4xx/5xx) seen, and the
// screenshots. Exits 0 when all went through without an error, 1
// otherwise, 2 on bad usage.
import { launch, watchedPage } from './chromium.mjs';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

const [base, set, image, shots] = process.argv.slice(2);
if (!base || !set || !image || !shots) {
  console.error('usage: node sidecar_page.mjs BASE_URL SET IMAGE SCREENSHOT_DIR');
  process.exit(2);
}
mkdirSync(shots, { recursive: true });

const seen = { list_heading: '', heading: '', facts: '', offered_image: '', kept: null,
  focus_after_leaving: '', move: '', errors: [],
  failed_requests: [], screenshots: [] };
let browser = null;
try {
  browser = await launch();
  const page = await watchedPage(browser, seen);
  page.on('dialog', (d) => { seen.errors.push('dialog: ' + d.message()); d.dismiss(); });
  const shot = async (name) => {
    const file = join(shots, name);
    await page.screenshot({ path: file, fullPage: true });
    seen.screenshots.push(file);
  };

  await page.goto(base + '/#/sidecars');
  await page.waitForSelector('main h1', { timeout: 20000 });
  seen.list_heading = await page.textContent('main h1');
  await page.click(`main a[href="#/sidecar/${encodeURIComponent(set)}"]`, { timeout: 20000 });
  await page.waitForSelector('details.apply summary', { timeout: 20000 });
  seen.heading = await page.textContent('main h1');
  seen.facts = await page.evaluate(() => [...document.querySelectorAll('main p')]
    .map((p) => p.textContent).find((t) => t.startsWith('Selects')) || '');
  await shot('sidecar-set.png');
  await page.click('details.apply summary');
  seen.offered_image = await page.inputValue('#sidecar-image');
  await page.fill('#sidecar-image', image);
  await page.fill('#sidecar-message', 'new image from the page');
  // A live re-render while typing keeps what was typed and the field typed
  // in; once the viewer has left the form, a re-render does not pull them
  // back into it.
  await page.evaluate(() => refresh());
  seen.kept = await page.evaluate(() => ({ focus: document.activeElement.id,
    image: document.querySelector('#sidecar-image').value,
    message: document.querySelector('#sidecar-message').value }));
  await page.evaluate(() => document.activeElement.blur());
  await page.evaluate(() => refresh());
  seen.focus_after_leaving = await page.evaluate(() => document.activeElement.id || 'none');
  await page.click('form.apply button[type=submit]');
  // The set's update starts: its line names the move to the next version.
  await page.waitForFunction(() => [...document.querySelectorAll('main p')]
    .some((p) => /v\d+ → v\d+/.test(p.textContent)), null, { timeout: 30000 });
  seen.move = await page.evaluate(() => [...document.querySelectorAll('main p')]
    .map((p) => p.textContent).find((t) => /v\d+ → v\d+/.test(t)).match(/v\d+ → v\d+/)[0]);
  await shot('sidecar-set-applied.png');
} catch (e) {
  seen.errors.push(String(e));
} finally {
  if (browser) await browser.close();
}
console.log(JSON.stringify(seen));
process.exit(seen.errors.length || seen.failed_requests.length ? 1 : 0);
