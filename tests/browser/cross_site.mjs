// cross_site.mjs: a page from another origin tries to change staggerd, as
// any web page its operator visits could.
//
//   node cross_site.mjs API_URL BODY_FILE PORT_MIN
//
// Serves the attacking page itself on 127.0.0.1 (the first free port from
// PORT_MIN: another origin than staggerd's), opens it in headless Chromium,
// and lets it POST the Thrift JSON message in BODY_FILE to API_URL in every
// way a page may without staggerd's consent: a no-cors fetch of a Blob
// without a type, the same as text/plain, a cors fetch with Thrift's type.
// Prints one JSON line: what each attempt saw and the page's origin. Exits
// 0 once every attempt has finished, 1 on errors, 2 on bad usage.
import { launch } from './chromium.mjs';
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';

const [apiUrl, bodyFile, portMin] = process.argv.slice(2);
if (!apiUrl || !bodyFile || !portMin) {
  console.error('usage: node cross_site.mjs API_URL BODY_FILE PORT_MIN');
  process.exit(2);
}
const body = readFileSync(bodyFile, 'utf8');
const page = `<!doctype html><title>elsewhere</title><script>
const API = ${JSON.stringify(apiUrl)};
const BODY = ${JSON.stringify(body)};
window.attempts = (async () => {
  const tries = [
    ['no-cors, no type', { method: 'POST', mode: 'no-cors', body: new Blob([BODY]) }],
    ['no-cors, text/plain', { method: 'POST', mode: 'no-cors', headers: { 'Content-Type': 'text/plain' }, body: BODY }],
    ['cors, thrift json', { method: 'POST', headers: { 'Content-Type': 'application/vnd.apache.thrift.json' }, body: BODY }],
  ];
  const out = [];
  for (const [name, init] of tries) {
    try {
      const r = await fetch(API, init);
      out.push(name + ': ' + r.type + ' ' + r.status);
    } catch (e) {
      out.push(name + ': ' + e);
    }
  }
  return out;
})();
</script>`;

async function listen(server, port, last) {
  for (; port <= last; port++) {
    const ok = await new Promise((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (ok) return port;
  }
  throw new Error('no free port from ' + portMin);
}

const result = { origin: '', attempts: [], errors: [] };
let code = 1;
let browser = null;
const server = createServer((req, res) => {
  res.writeHead(200, { 'Content-Type': 'text/html' });
  res.end(page);
});
try {
  const port = await listen(server, Number(portMin), Number(portMin) + 99);
  result.origin = `http://127.0.0.1:${port}`;
  browser = await launch();
  const tab = await browser.newPage();
  await tab.goto(result.origin + '/');
  result.attempts = await tab.evaluate(() => window.attempts);
  if (result.attempts.length === 3) code = 0;
} catch (e) {
  result.errors.push(String(e));
} finally {
  if (browser) await browser.close();
  server.close();
}
console.log(JSON.stringify(result));
process.exit(code);
