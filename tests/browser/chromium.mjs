// chromium.mjs: what the browser scripts share: Debian's Chromium (or
// $CHROMIUM) started headless by playwright-core, and a tab that records
// what goes wrong in it.
import { chromium } from 'playwright-core';

export function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  });
}

// A new 1100×900 tab of @browser that adds each page error (and, unless
// @pageErrorsOnly, each console error) to @seen.errors, and each answer of
// 400 or more to @seen.failed_requests.
export async function watchedPage(browser, seen, pageErrorsOnly = false) {
  const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  if (!pageErrorsOnly) page.on('console', (m) => { if (m.type() === 'error') seen.errors.push(m.text()); });
  page.on('pageerror', (e) => seen.errors.push(String(e)));
  page.on('response', (r) => { if (r.status() >= 400) seen.failed_requests.push(r.status() + ' ' + r.url()); });
  return page;
}
