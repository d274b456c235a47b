/* app.js: Stagger's web UI.
 *
 * A single page with hash routes (#/, #/job/R/E/N, #/update/R/E/N/ID,
 * #/updates?..., #/plans?..., #/plan/ID, #/hosts, #/sidecars,
 * #/sidecar/NAME). Data comes from staggerd's JSON endpoints under /ui/api/;
 * changes are pushed over Server-Sent Events (/ui/api/events), and when those
 * are unavailable the current view is polled once a second. Views re-render
 * in place. All user-provided text goes through textContent, never HTML.
 */
'use strict';

const STATE_NAMES = {
  p: 'pending', u: 'updating', U: 'updated', b: 'rolling back', B: 'rolled back', f: 'failed',
};
const STATE_VARS = {
  p: '--pending', u: '--updating', U: '--updated', b: '--rolling-back', B: '--rolled-back', f: '--failed',
};
const ACTIVE = new Set(['ROLLING_FORWARD', 'ROLLING_BACK', 'ROLL_FORWARD_PAUSED', 'ROLL_BACK_PAUSED',
  'ROLL_FORWARD_AWAITING_PULSE', 'ROLL_BACK_AWAITING_PULSE']);
const ALL_STATUSES = ['ROLLING_FORWARD', 'ROLLING_BACK', 'ROLL_FORWARD_PAUSED', 'ROLL_BACK_PAUSED',
  'ROLLED_FORWARD', 'ROLLED_BACK', 'ABORTED', 'ERROR', 'FAILED', 'ROLL_FORWARD_AWAITING_PULSE',
  'ROLL_BACK_AWAITING_PULSE'];
const PAGE_SIZE = 25;
/* A rollout plan's or stage's status in words, when the plan gives no reason. */
const ROLLOUT_WORDS = {
  PENDING: 'waits for the stages before it', WAITING_FOR_GATE: 'waits for a gate',
  AWAITING_APPROVAL: 'waits for approval', ROLLING_FORWARD: 'its update runs', DONE: 'done',
  FAILED: 'failed', ROLLING_BACK: 'going back to the configuration from before the plan',
  ROLLED_BACK: 'back on the configuration from before the plan',
  ABORTED: 'stopped; nothing was undone', PAUSED: 'paused',
};
const ROLLOUT_ENDED = new Set(['DONE', 'FAILED', 'ROLLED_BACK', 'ABORTED']);

let session = { can_act: false, csrf: '', cluster: '' };
let current = null;          /* the view on screen: { render, matches(change), timer } */
let live = null;             /* the EventSource, when connected */
let pollTimer = 0;

/* ---- small helpers ------------------------------------------------------ */

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'class') node.className = v;
    /* Through the CSSOM: the content policy refuses style attributes. */
    else if (k === 'style') node.style.cssText = v;
    else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

/* @kind: 'rollout' for a plan's or a stage's status, where PENDING means
   not started rather than an instance's pending. */
function badge(status, kind) {
  return el('span', { class: 'badge ' + (kind ? kind + ' ' : '') + status },
    status.replace(/_/g, ' ').toLowerCase());
}

function jobPath(j) {
  return encodeURIComponent(j.role) + '/' + encodeURIComponent(j.environment) + '/' +
    encodeURIComponent(j.name);
}

function jobLabel(j) {
  return j.role + '/' + j.environment + '/' + j.name;
}

function when(ms) {
  if (!ms) return '';
  const d = new Date(ms);
  return d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}

function timeEl(ms) {
  return el('time', { datetime: ms ? new Date(ms).toISOString() : null }, when(ms));
}

function duration(ms) {
  if (ms === null || ms === undefined || ms < 0) return '–';
  if (ms < 10000 && ms % 1000) return (ms / 1000).toFixed(1) + 's';
  let s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600); s -= h * 3600;
  const m = Math.floor(s / 60); s -= m * 60;
  if (h) return h + 'h ' + m + 'm';
  if (m) return m + 'm ' + s + 's';
  return s + 's';
}

/* "0-19, 40-59" for a list of instance ids. */
function rangesText(ids) {
  const sorted = [...ids].sort((a, b) => a - b);
  const parts = [];
  for (let i = 0; i < sorted.length; i++) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j++;
    parts.push(j > i ? sorted[i] + '-' + sorted[j] : String(sorted[i]));
    i = j;
  }
  return parts.join(', ');
}

/* @back: the instances done were rolled back, drawn apart from success. */
function progressBar(done, busy, bad, total, back) {
  const pct = (n) => (total > 0 ? (100 * n / total).toFixed(2) : 0) + '%';
  return el('div', {
    class: 'bar' + (back ? ' rolling-back' : ''), role: 'progressbar', 'aria-valuemin': 0,
    'aria-valuemax': total, 'aria-valuenow': done,
    'aria-label': done + ' of ' + total + (back ? ' rolled back' : ' done'),
  },
  el('span', { class: back ? 'back' : 'done', style: 'width:' + pct(done) }),
  el('span', { class: 'busy', style: 'width:' + pct(busy) }),
  el('span', { class: 'bad', style: 'width:' + pct(bad) }));
}

async function getJSON(url) {
  const r = await fetch(url, { headers: { Accept: 'application/json' }, cache: 'no-store' });
  let body = null;
  try { body = await r.json(); } catch (e) { body = null; }
  if (!r.ok) throw new Error((body && body.error) || (r.status + ' ' + r.statusText));
  return body;
}

function show(...nodes) {
  const main = document.getElementById('main');
  main.replaceChildren(...nodes);
}

/* A page that could not be read: a heading, what went wrong, and the way
   back to the jobs. */
function failure(err) {
  return [el('h1', {}, 'Could not load this page'),
    el('p', { class: 'notice error', role: 'alert' }, err.message),
    el('p', {}, el('a', { href: '#/' }, 'See all jobs.'))];
}

function setNav(which) {
  for (const a of document.querySelectorAll('[data-nav]')) {
    if (a.dataset.nav === which) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}

/* ---- canvases ------------------------------------------------------------- */

/* Sizes @canvas to @width × @height CSS pixels at the screen's pixel ratio
   (sharp on any screen) and returns its 2D context, drawing in CSS pixels. */
function canvasContext(canvas, width, height) {
  const ratio = window.devicePixelRatio || 1;
  canvas.style.height = height + 'px';
  canvas.width = Math.round(width * ratio);
  canvas.height = Math.round(height * ratio);
  const ctx = canvas.getContext('2d');
  ctx.scale(ratio, ratio);
  return ctx;
}

/* The CSS variables' values now, by name ('--fg'): the colours of the
   light or the dark scheme, whichever shows. */
function cssColours() {
  const cs = getComputedStyle(document.documentElement);
  return (name) => cs.getPropertyValue(name).trim();
}

/* ---- instance ranges ------------------------------------------------------- */

/* "0-3,7" -> [0,1,2,3,7] */
function expandRanges(text) {
  const out = [];
  if (!text) return out;
  for (const part of text.split(',')) {
    const [a, b] = part.split('-').map(Number);
    for (let i = a; i <= (b === undefined ? a : b); i++) out.push(i);
  }
  return out;
}

/* ---- the per-instance grid (canvas: stays light at 10,000 cells) ------------ */

function instanceGrid(ids, states, onPick) {
  const canvas = el('canvas', {
    class: 'grid', tabindex: 0, role: 'img',
    'aria-label': 'Instances by state; use the arrow keys to inspect one',
    /* What is drawn, for tools that read the page (one letter an instance). */
    'data-states': states,
  });
  const info = el('div', { class: 'grid-info', 'aria-live': 'polite' });
  const wrap = el('div', { class: 'grid-wrap' }, canvas, info);
  let focus = -1;
  let geometry = null;

  function colours() {
    const css = cssColours();
    const c = {};
    for (const [k, v] of Object.entries(STATE_VARS)) c[k] = css(v);
    c.focus = css('--focus');
    return c;
  }

  function draw() {
    const width = Math.max(canvas.clientWidth, 100);
    const n = ids.length;
    /* Cells shrink with the count, but never below 4 px. */
    const cell = n <= 200 ? 18 : n <= 1000 ? 12 : n <= 4000 ? 8 : 5;
    const gap = cell >= 8 ? 2 : 1;
    const perRow = Math.max(1, Math.floor(width / (cell + gap)));
    const rows = Math.ceil(n / perRow);
    const height = Math.max(rows * (cell + gap), cell);
    const ctx = canvasContext(canvas, width, height);
    const c = colours();
    for (let i = 0; i < n; i++) {
      const x = (i % perRow) * (cell + gap);
      const y = Math.floor(i / perRow) * (cell + gap);
      ctx.fillStyle = c[states[i]] || c.p;
      ctx.fillRect(x, y, cell, cell);
    }
    if (focus >= 0 && focus < n) {
      ctx.strokeStyle = c.focus;
      ctx.lineWidth = 2;
      ctx.strokeRect((focus % perRow) * (cell + gap) - 1, Math.floor(focus / perRow) * (cell + gap) - 1,
        cell + 2, cell + 2);
    }
    geometry = { cell, gap, perRow };
  }

  /* @pick: chosen (click, keys), not only hovered: then onPick shows it. */
  function describe(i, pick) {
    if (i < 0 || i >= ids.length) { info.textContent = ''; return; }
    info.textContent = 'Instance ' + ids[i] + ': ' + (STATE_NAMES[states[i]] || 'pending');
    if (onPick && pick) onPick(ids[i]);
  }

  function indexAt(ev) {
    if (!geometry) return -1;
    const r = canvas.getBoundingClientRect();
    const col = Math.floor((ev.clientX - r.left) / (geometry.cell + geometry.gap));
    const row = Math.floor((ev.clientY - r.top) / (geometry.cell + geometry.gap));
    if (col < 0 || col >= geometry.perRow) return -1;
    const i = row * geometry.perRow + col;
    return i < ids.length ? i : -1;
  }

  canvas.addEventListener('mousemove', (ev) => describe(indexAt(ev)));
  canvas.addEventListener('click', (ev) => { focus = indexAt(ev); draw(); describe(focus, true); });
  canvas.addEventListener('keydown', (ev) => {
    if (!geometry || ids.length === 0) return;
    const step = { ArrowRight: 1, ArrowLeft: -1, ArrowDown: geometry.perRow, ArrowUp: -geometry.perRow,
      Home: -Infinity, End: Infinity }[ev.key];
    if (step === undefined) return;
    ev.preventDefault();
    focus = Math.min(ids.length - 1, Math.max(0, (focus < 0 ? 0 : focus) + (Number.isFinite(step) ? step
      : step > 0 ? ids.length : -ids.length)));
    draw();
    describe(focus, true);
  });
  new ResizeObserver(() => draw()).observe(canvas);
  requestAnimationFrame(draw);
  return wrap;
}

/* ---- an update's timeline (canvas: a row per instance's work) --------------- */

/* Each phase's colour and name, as /ui/api/timeline names them. */
const PHASES = {
  waiting: ['--untouched', 'waiting (gates, the runtime)'], pending: ['--pending', 'pending'],
  stopping: ['--rolling-back', 'stopping'], stopped: ['--paused', 'stopped'],
  starting: ['--updating', 'starting, until healthy'], healthy: ['--updated', 'healthy, watched'],
  failed: ['--failed', 'failed'], paused: ['--paused', 'update paused'],
  awaiting_pulse: ['--pulse', 'awaiting a pulse'],
};

/* Seconds with one decimal, for times within an update. */
function secs(ms) {
  return ms === null || ms === undefined ? '–' : (ms / 1000).toFixed(1) + ' s';
}

/* "3", "back 3" (a rollback's), "?" (not recorded). */
function batchName(x) {
  return (x.back ? 'back ' : '') + (x.batch === null ? '?' : x.batch);
}

function timelineCanvas(t) {
  const works = t.instances;
  const rows = [{ label: 'update', phases: t.holds }, ...works.map((w) => ({
    label: 'instance ' + w.instance + ' (batch ' + batchName(w) + ')', phases: w.phases }))];
  /* What is drawn, for tools that read the page: each work as
     "instance[b]:phase@from-to,..." joined by ";" (b: rolling back). */
  const drawn = works.map((w) => w.instance + (w.back ? 'b' : '') + ':' +
    w.phases.map((p) => p.phase + '@' + p.from_ms + '-' + p.to_ms).join(',')).join(';');
  const canvas = el('canvas', { class: 'timeline-chart', tabindex: 0, role: 'img',
    'aria-label': 'Each instance\'s phases over the update\'s time; point at a row to read it',
    'data-phases': drawn, 'data-works': works.length });
  const info = el('div', { class: 'grid-info', 'aria-live': 'polite' });
  let geometry = null;
  const span = Math.max(t.to_ms - t.from_ms, 1);

  function draw() {
    const width = Math.max(canvas.clientWidth, 100);
    /* Rows thin out with the count, but never below 2 px. */
    const row = rows.length <= 60 ? 12 : rows.length <= 300 ? 5 : 2;
    const gap = row >= 5 ? 2 : 0;
    const limitBar = 8;
    const height = limitBar * 2 + 6 + rows.length * (row + gap);
    const ctx = canvasContext(canvas, width, height);
    const css = cssColours();
    const colour = (name) => css((PHASES[name] || PHASES.waiting)[0]);
    const x = (ms) => (ms - t.from_ms) / span * width;
    /* The time taken, and under it the physical limit, from the same start. */
    ctx.fillStyle = css('--muted');
    ctx.fillRect(0, 0, width, limitBar);
    ctx.fillStyle = css('--gate');
    ctx.fillRect(0, limitBar + 2, Math.min(width, t.limit_ms / span * width), limitBar);
    /* The prediction made when it started, a mark across both bars. */
    if (t.predicted_ms >= 0 && t.predicted_ms <= span) {
      ctx.fillStyle = css('--fg');
      ctx.fillRect(Math.min(width - 2, t.predicted_ms / span * width), 0, 2, limitBar * 2 + 2);
    }
    const top = limitBar * 2 + 6;
    rows.forEach((r, i) => {
      for (const p of r.phases) {
        ctx.fillStyle = colour(p.phase);
        ctx.fillRect(x(p.from_ms), top + i * (row + gap), Math.max(1, x(p.to_ms) - x(p.from_ms)), row);
      }
    });
    /* Where each batch began. */
    ctx.strokeStyle = css('--muted');
    ctx.lineWidth = 1;
    for (const b of t.batches) {
      ctx.beginPath();
      ctx.moveTo(Math.round(x(b.from_ms)) + 0.5, top);
      ctx.lineTo(Math.round(x(b.from_ms)) + 0.5, height);
      ctx.stroke();
    }
    geometry = { top, row, gap, width };
  }

  function describe(ev) {
    if (!geometry) return;
    const r = canvas.getBoundingClientRect();
    const at = t.from_ms + (ev.clientX - r.left) / geometry.width * span;
    const i = Math.floor((ev.clientY - r.top - geometry.top) / (geometry.row + geometry.gap));
    if (i < 0 || i >= rows.length) {
      info.textContent = 'took ' + secs(span) + '; its physical limit ' + secs(t.limit_ms);
      return;
    }
    const p = rows[i].phases.find((q) => q.from_ms <= at && at < q.to_ms);
    info.textContent = rows[i].label + ': ' + (p ? (PHASES[p.phase] || [0, p.phase])[1] + ' from +' +
      secs(p.from_ms - t.from_ms) + ' to +' + secs(p.to_ms - t.from_ms) : 'not in the update then');
  }

  canvas.addEventListener('mousemove', describe);
  new ResizeObserver(() => draw()).observe(canvas);
  requestAnimationFrame(draw);
  return el('div', { class: 'grid-wrap' }, canvas, info);
}

/* The timeline section of an update's page: the time taken beside the
   physical limit, the batches and the chart. */
function rolloutTimeline(t) {
  const took = t.to_ms - t.from_ms;
  const summary = t.limit_ms > 0
    ? 'Took ' + secs(took) + (t.active ? ' so far' : '') + ', ' + (took / t.limit_ms).toFixed(2) +
      ' times its physical limit of ' + secs(t.limit_ms) + ' (per batch, its slowest instance\'s ' +
      'start to healthy plus the ' + secs(t.watch_ms) + ' watch).'
    : 'Took ' + secs(took) + (t.active ? ' so far' : '') + '; no instance became healthy yet, so ' +
      'no physical limit.';
  /* What its rehearsal predicted when it started, beside what it took. */
  const prediction = t.predicted_ms >= 0
    ? 'Predicted ' + secs(t.predicted_ms) + ' when it started (from the job\'s last finished ' +
      'update); ' + (t.active ? 'so far ' : 'it took ') + Math.round(took / Math.max(t.predicted_ms, 1) *
      100) + ' % of that.'
    : 'No prediction: no earlier update of the job had measured its instances when it started.';
  const batches = el('table', { class: 'timeline-batches' },
    el('thead', {}, el('tr', {}, ['Batch', 'Began', 'Took', 'Instances', 'Slowest to healthy',
      'Limit', 'Wait before', 'Held by'].map((h) => el('th', {}, h)))),
    el('tbody', {}, t.batches.map((b) => el('tr', {},
      el('td', {}, batchName(b)), el('td', {}, '+' + secs(b.from_ms - t.from_ms)),
      el('td', {}, secs(b.to_ms - b.from_ms)), el('td', {}, String(b.instances)),
      el('td', {}, b.slowest === null ? '–' : secs(b.slowest_ms) + ' (instance ' + b.slowest + ')'),
      el('td', {}, secs(b.limit_ms)),
      el('td', {}, secs(b.gap_ms) + (b.gap_why ? ' (' + b.gap_why + ')' : '')),
      el('td', {}, b.held_by || '–')))));
  return el('section', { class: 'rollout-timeline' },
    el('p', { class: 'timeline-summary' }, summary),
    el('p', { class: 'timeline-prediction', 'data-predicted': String(t.predicted_ms) }, prediction),
    el('div', { class: 'legend' }, el('span', {}, el('i', { style: 'background: var(--muted)' }),
      'time taken'), el('span', {}, el('i', { style: 'background: var(--gate)' }), 'physical limit'),
    t.predicted_ms >= 0 ? el('span', {}, el('i', { style: 'background: var(--fg)' }), 'predicted') : '',
    Object.keys(PHASES).map((k) => el('span', {}, el('i', { style: 'background: var(' + PHASES[k][0] +
      ')' }), PHASES[k][1]))),
    t.instances.length ? timelineCanvas(t) : el('p', { class: 'muted' }, 'No instance has begun yet.'),
    t.batches.length ? batches : '');
}

function legend(states) {
  const counts = {};
  for (const ch of states) counts[ch] = (counts[ch] || 0) + 1;
  return el('div', { class: 'legend' },
    Object.keys(STATE_NAMES).map((k) => el('span', {},
      el('i', { style: 'background: var(' + STATE_VARS[k] + ')' }),
      STATE_NAMES[k] + ' ' + (counts[k] || 0))));
}

/* ---- views ------------------------------------------------------------------ */

async function viewJobs() {
  setNav('jobs');
  const data = await getJSON('/ui/api/jobs');
  const rows = data.jobs.map((j) => el('tr', {},
    el('td', {}, el('a', { href: '#/job/' + jobPath(j) }, jobLabel(j))),
    el('td', { class: 'num' }, j.instances),
    el('td', { class: 'num' }, j.healthy),
    el('td', { class: 'hide-narrow' }, j.versions.map((v) => el('span', { class: 'chip' },
      'v' + v.version + ' × ' + v.instances))),
    el('td', {}, j.update ? el('a', { href: '#/update/' + jobPath(j) + '/' + encodeURIComponent(j.update.id) },
      badge(j.update.status)) : el('span', { class: 'muted' }, '–')),
    el('td', {}, j.update ? [progressBar(j.update.done, 0, j.update.failed, j.update.total, /BACK/.test(j.update.status)),
      el('span', { class: 'muted' }, j.update.done + '/' + j.update.total)] : '')));
  show(el('h1', {}, 'Jobs'),
    data.jobs.length === 0
      ? el('p', { class: 'notice' }, 'No jobs yet. Create one with: stagger job create CLUSTER/ROLE/ENV/NAME job.json')
      : el('div', { class: 'table-wrap' }, el('table', {},
        el('thead', {}, el('tr', {}, el('th', {}, 'Job'), el('th', { class: 'num' }, 'Instances'),
          el('th', { class: 'num' }, 'Healthy'), el('th', { class: 'hide-narrow' }, 'Versions in use'),
          el('th', {}, 'Active update'), el('th', {}, 'Progress'))),
        el('tbody', {}, rows))));
}

function summaryRows(list) {
  return list.map((u) => el('tr', {},
    el('td', {}, el('a', { href: '#/update/' + jobPath(u) + '/' + encodeURIComponent(u.id) }, u.id.slice(0, 8))),
    el('td', {}, el('a', { href: '#/job/' + jobPath(u) }, jobLabel(u))),
    el('td', {}, badge(u.status)),
    el('td', {}, u.user),
    el('td', { class: 'hide-narrow' }, timeEl(u.created_ms)),
    el('td', { class: 'hide-narrow' }, timeEl(u.modified_ms))));
}

function summaryTable(list) {
  return el('div', { class: 'table-wrap' }, el('table', {},
    el('thead', {}, el('tr', {}, el('th', {}, 'Update'), el('th', {}, 'Job'), el('th', {}, 'Status'),
      el('th', {}, 'User'), el('th', { class: 'hide-narrow' }, 'Started'),
      el('th', { class: 'hide-narrow' }, 'Last change'))),
    el('tbody', {}, summaryRows(list))));
}

/* An instance's use of one resource against what it reserved, as
 * Aurora's observer shows it: "12 of 64 MiB"; '–' when not measured. */
function used(value, reserved, unit) {
  if (value === null || value === undefined) return '–';
  const mib = (n) => (n / 1048576).toFixed(n < 10485760 ? 1 : 0);
  const show = unit === 'cores' ? (n) => n.toFixed(2) : mib;
  const suffix = unit === 'cores' ? ' cores' : ' MiB';
  return show(value) + (reserved > 0 ? ' of ' + show(reserved) : '') + suffix;
}

function usageCells(u) {
  return [
    el('td', { class: 'num hide-narrow' }, u ? used(u.cpus_used, u.cpus, 'cores') : '–'),
    el('td', { class: 'num hide-narrow' }, u ? used(u.memory_bytes, u.ram_bytes, 'bytes') : '–'),
    el('td', { class: 'num hide-narrow' }, u ? used(u.disk_bytes, u.disk_reserved_bytes, 'bytes') : '–')];
}

function usageLine(u) {
  if (!u) return '';
  const extra = [];
  if (u.rss_bytes !== null) extra.push('RSS ' + used(u.rss_bytes, 0, 'bytes'));
  if (u.throttled_ms) extra.push('throttled for ' + duration(u.throttled_ms) + ' by its CPU quota');
  if (u.oom_kills) extra.push(u.oom_kills + ' of its processes killed by its memory limit');
  return el('p', { class: 'usage' }, 'Uses CPU ' + used(u.cpus_used, u.cpus, 'cores') +
    ', memory ' + used(u.memory_bytes, u.ram_bytes, 'bytes') +
    ', disk ' + used(u.disk_bytes, u.disk_reserved_bytes, 'bytes') +
    (extra.length ? ' (' + extra.join('; ') + ')' : '') + '.');
}

/* An instance's ServerSet membership (Aurora's announcer): its endpoint
   while it is a member, else why not. */
function announceCell(a) {
  if (!a) return el('td', { class: 'announce muted' }, '–');
  if (a.member) {
    return el('td', { class: 'announce', 'data-member': a.member, title: a.member },
      a.endpoint || a.member.replace(/.*\//, ''));
  }
  return el('td', { class: 'announce muted', 'data-member': '' },
    a.problem ? 'not announced: ' + a.problem : 'not yet');
}

function announceLine(a) {
  if (!a) return '';
  return el('p', { class: 'announce' }, a.member
    ? 'Announced in the ServerSet ' + a.path + (a.endpoint ? ' at ' + a.endpoint : '') + ' (' +
      a.member.replace(/.*\//, '') + ').'
    : 'Not announced in the ServerSet ' + a.path + (a.problem ? ': ' + a.problem : ' yet') + '.');
}

async function viewJob(role, env, name) {
  setNav('jobs');
  const q = 'role=' + encodeURIComponent(role) + '&environment=' + encodeURIComponent(env) +
    '&name=' + encodeURIComponent(name);
  const data = await getJSON('/ui/api/job?' + q);
  const now = data.now_ms;
  const announced = data.instances.some((i) => i.announce);
  const rows = data.instances.map((i) => el('tr', {},
    el('td', { class: 'num' }, i.id, i.surge
      ? [' ', el('span', { class: 'muted', title: 'An extra instance beyond the job\'s count, ' +
        'run by the update while it replaces instances; it goes when the update ends.' }, 'surge')]
      : ''),
    el('td', {}, badge(i.status)),
    el('td', {}, i.healthy ? 'healthy' : el('span', { class: 'muted' }, 'not healthy')),
    el('td', { class: 'num' }, i.port === null ? '–' : i.port),
    el('td', { class: 'num' }, 'v' + i.version),
    el('td', { class: 'num hide-narrow' }, i.pid === null ? '–' : i.pid),
    el('td', { class: 'hide-narrow' }, i.started_ms ? duration(now - i.started_ms) : '–'),
    ...usageCells(i.usage),
    announced ? announceCell(i.announce) : '',
    el('td', {}, i.last_event ? [badge(i.last_event.status), ' ', i.last_event.message || '',
      ' ', el('span', { class: 'muted' }, when(i.last_event.ts_ms))] : '',
    i.sla_wait ? el('div', { class: 'muted' }, 'drain: ' + i.sla_wait) : '')));
  show(el('h1', {}, jobLabel(data)),
    el('h2', {}, 'Configurations'),
    el('ul', {}, data.groups.map((g) => el('li', {}, 'v' + g.version + ': instances ' + g.ranges))),
    el('h2', {}, 'Instances (' + data.instances.length + ')'),
    data.update && data.update.surge
      ? el('p', { class: 'muted' }, (/[-,]/.test(data.update.surge)
        ? 'Instances ' + data.update.surge + ' are surge instances'
        : 'Instance ' + data.update.surge + ' is a surge instance') + ' of the active update: ' +
        'extra instances beyond the job\'s count while it runs.') : '',
    el('div', { class: 'table-wrap' }, el('table', {},
      el('thead', {}, el('tr', {}, el('th', { class: 'num' }, 'Id'), el('th', {}, 'Status'),
        el('th', {}, 'Health'), el('th', { class: 'num' }, 'Port'), el('th', { class: 'num' }, 'Version'),
        el('th', { class: 'num hide-narrow' }, 'Pid'), el('th', { class: 'hide-narrow' }, 'Uptime'),
        el('th', { class: 'num hide-narrow' }, 'CPU'), el('th', { class: 'num hide-narrow' }, 'Memory'),
        el('th', { class: 'num hide-narrow' }, 'Disk'),
        announced ? el('th', { title: 'Its member in Aurora\'s ServerSet (ZooKeeper)' },
          'Announced') : '',
        el('th', {}, 'Last event'))),
      el('tbody', {}, rows))),
    data.instances_total > data.instances.length
      ? el('p', { class: 'muted' }, 'Showing the first ' + data.instances.length + ' of ' +
        data.instances_total + ' instances.') : '',
    el('h2', {}, 'Updates'),
    data.updates.length ? summaryTable(data.updates) : el('p', { class: 'muted' }, 'No updates yet.'));
}

/* POSTs a control with the session's token; a refusal is shown, and the
   page is read again either way. */
async function control(url, body, what) {
  const r = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Stagger-CSRF': session.csrf },
    body: JSON.stringify(body),
  });
  let reply = null;
  try { reply = await r.json(); } catch (e) { reply = null; }
  if (!r.ok) window.alert('Could not ' + what + ': ' + ((reply && reply.error) || r.statusText));
  refresh();
}

async function act(u, action, confirmText) {
  if (confirmText && !window.confirm(confirmText)) return;
  const message = 'from the web page';
  await control('/ui/api/update/' + action,
    { role: u.role, environment: u.environment, name: u.name, id: u.id, message }, action);
}

function controls(u) {
  if (!session.can_act || !ACTIVE.has(u.status)) return '';
  const paused = u.status.endsWith('_PAUSED');
  const forward = u.status.startsWith('ROLL_FORWARD') || u.status === 'ROLLING_FORWARD';
  return el('div', { class: 'controls' },
    paused ? el('button', { onclick: () => act(u, 'resume') }, 'Resume')
      : el('button', { onclick: () => act(u, 'pause') }, 'Pause'),
    forward ? el('button', { class: 'danger', onclick: () => act(u, 'rollback',
      'Roll this update back? Changed instances get their previous configuration again.') }, 'Roll back') : '',
    el('button', { class: 'danger', onclick: () => act(u, 'abort',
      'Abort this update? Instances stay as they are now.') }, 'Abort'));
}

function settingsFacts(s) {
  const facts = [
    ['Strategy', s.strategy + (s.group_sizes.length ? ' (' + s.group_sizes.join(', ') + ')' : '') +
      (s.autopause ? ', pause after each batch' : '')],
    ['Watch time', duration(s.watch_ms)],
    ['Failures per instance', s.max_per_instance_failures_percent !== null
      ? s.max_per_instance_failures_percent + '% of the instances touched' : s.max_per_instance_failures],
    ['Failed instances allowed', s.max_failed_instances_percent !== null
      ? s.max_failed_instances_percent + '% of the instances touched' : s.max_failed_instances],
    ['Surge instances allowed', s.max_surge_percent !== null
      ? s.max_surge_percent + '% of the instances touched' : (s.max_surge || 'none')],
    ['Largest batch', s.max_batch_size || 'no cap'],
    ['Update deadline', s.update_deadline_ms ? duration(s.update_deadline_ms) : 'none'],
    ['Roll back on failure', s.rollback_on_failure ? 'yes' : 'no'],
    ['Pulse interval', s.pulse_ms ? duration(s.pulse_ms) : 'not coordinated'],
    ['Batch growth factor', s.growth_factor || 1],
    ['Kept in service', s.min_in_service || 0],
    ['Pause between batches', s.pause_between_batches_ms ? duration(s.pause_between_batches_ms) : 'none'],
    ['Start deadline', s.max_instance_start_ms ? duration(s.max_instance_start_ms) : 'none'],
    ['Instances', s.only || 'all'],
  ];
  return el('dl', { class: 'facts' }, facts.map(([k, v]) => el('div', {}, el('dt', {}, k), el('dd', {}, v))));
}

function diffView(diff) {
  if (!diff) return el('p', { class: 'muted' }, 'No configuration change.');
  const pre = el('pre', { class: 'diff' });
  for (const line of diff.lines) {
    const cls = line[0] === '+' ? 'add' : line[0] === '-' ? 'del' : null;
    pre.append(cls ? el('span', { class: cls }, line + '\n') : document.createTextNode(line + '\n'));
  }
  const notes = (diff.notes || []).map((n) => el('p', { class: 'notice' }, n));
  return notes.length ? el('div', {}, notes, pre) : pre;
}

/* Update events and instance events apart, newest first, so that a big
   update's thousands of instance events never bury its own. */
function timeline(kind, items) {
  items.sort((a, b) => b.ts - a.ts);
  return el('ol', { class: 'timeline ' + kind, reversed: true },
    items.map((i) => el('li', {}, timeEl(i.ts), el('span', {}, i.node))));
}

function updateTimeline(data) {
  return timeline('update-events', data.events.map((e) => ({ ts: e.ts_ms, node: [badge(e.status), ' ',
    e.user ? 'by ' + e.user : '', e.message ? ' — ' + e.message : ''] })));
}

function instanceTimeline(data) {
  return timeline('instance-events', data.instance_events.map((e) => ({ ts: e.ts_ms, node: ['instance ' +
    e.instance + ': ' + e.action.replace(/^INSTANCE_/, '').replace(/_/g, ' ').toLowerCase(),
  e.message ? ' — ' + e.message : ''] })));
}

/* ---- one instance, picked on the update page ------------------------------- */

/* The instance picked last ({ update, instance }), shown again when the
   page is drawn anew for a change. */
let picked = null;

/* An AuroraExecutor task's instance shows one process's output at a
   time: the runner's (stagger-thermos) or, picked, a process's. */
async function showInstance(u, instance, panel, process) {
  picked = { update: u.id, instance, process };
  const q = 'role=' + encodeURIComponent(u.role) + '&environment=' + encodeURIComponent(u.environment) +
    '&name=' + encodeURIComponent(u.name) + '&instance=' + instance +
    (process ? '&process=' + encodeURIComponent(process) : '');
  let d;
  try {
    d = await getJSON('/ui/api/instance?' + q);
  } catch (e) {
    panel.replaceChildren(el('p', { class: 'muted' }, 'Instance ' + instance + ': ' + e.message));
    return;
  }
  const full = (stream) => el('a', { href: '/ui/api/instance/log?' + q + '&stream=' + stream,
    target: '_blank', rel: 'noopener' }, 'all of it');
  const pick = (name, label) => el('button', { type: 'button', class: 'process',
    'aria-pressed': String((process || null) === name),
    onclick: () => showInstance(u, instance, panel, name) }, label);
  const processes = (d.processes || []).length ? el('p', { class: 'processes' }, 'Output of: ',
    pick(null, 'the runner'), ...d.processes.map((name) => pick(name, name))) : '';
  const whose = process ? ' of ' + process : '';
  panel.replaceChildren(
    el('h3', {}, 'Instance ' + instance + ' ', badge(d.status)),
    d.cause ? el('p', { class: 'cause' }, timeEl(d.cause_ms), ' ', d.cause) : '',
    usageLine(d.usage),
    announceLine(d.announce),
    timeline('task-events', d.events.map((e) => ({ ts: e.ts_ms,
      node: [badge(e.status), e.message ? ' — ' + e.message : ''] }))),
    processes,
    el('h4', {}, 'Standard error' + whose + ' (its end) ', full('stderr')),
    el('pre', { class: 'log stderr' }, d.stderr_tail || '(nothing)'),
    el('h4', {}, 'Output' + whose + ' (its end) ', full('stdout')),
    el('pre', { class: 'log stdout' }, d.stdout_tail || '(nothing)'));
}

async function viewUpdate(role, env, name, id) {
  setNav('updates');
  const q = 'role=' + encodeURIComponent(role) + '&environment=' + encodeURIComponent(env) +
    '&name=' + encodeURIComponent(name) + '&id=' + encodeURIComponent(id);
  const [u, t] = await Promise.all([getJSON('/ui/api/update?' + q), getJSON('/ui/api/timeline?' + q)]);
  const p = u.progress;
  const ids = expandRanges(u.instances.ranges);
  const back = /BACK/.test(u.status);
  const facts = [
    ['Status', badge(u.status)],
    ['Started by', u.user || '–'],
    ['Started', when(u.created_ms)],
    ['Message', u.message || '–'],
    ['Conditions', conditionsEl(u.conditions)],
    /* Counts start over when an update turns back. */
    ['Progress', p.done + ' of ' + p.total + ' instances' + (back ? ' rolled back' : '')],
    ['Current batch', p.in_flight.length ? 'instances ' + rangesText(p.in_flight) : '–'],
    ['Surge instances', u.instances.surge ? u.instances.surge + ' (beyond the job\'s count)' : '–'],
    [back ? 'Failed while rolling back' : 'Failed', p.failed + ' (limit ' +
      (u.settings.max_failed_instances_percent !== null
        ? u.settings.max_failed_instances_percent + '%' : u.settings.max_failed_instances) + ')'],
    ['Elapsed', duration(p.elapsed_ms)],
    ['Time left (estimate)', ACTIVE.has(u.status) ? duration(p.eta_ms) : '–'],
  ];
  if (u.pulse) {
    const since = u.now_ms - u.pulse.last_ms;
    facts.push(['Last pulse', u.pulse.last_ms ? duration(since) + ' ago' : 'never']);
    facts.push(['Blocks in', u.pulse.last_ms ? duration(Math.max(0, u.pulse.block_after_ms - since)) : 'blocked']);
  }
  const panel = el('section', { id: 'instance-panel', 'aria-live': 'polite' },
    ids.length ? el('p', { class: 'muted' }, 'Pick an instance to see its events and output.') : '');
  if (picked && picked.update === u.id) showInstance(u, picked.instance, panel, picked.process);
  show(el('h1', {}, 'Update ', el('span', { class: 'mono' }, u.id), ' of ',
    el('a', { href: '#/job/' + jobPath(u) }, jobLabel(u))),
  controls(u),
  el('dl', { class: 'facts' }, facts.map(([k, v]) => el('div', {}, el('dt', {}, k), el('dd', {}, v)))),
  progressBar(p.done, p.in_flight.length, p.failed, p.total, back),
  el('h2', {}, 'Instances'),
  legend(u.instances.states),
  ids.length ? instanceGrid(ids, u.instances.states, (i) => showInstance(u, i, panel))
    : el('p', { class: 'muted' }, 'No instance changes.'),
  panel,
  el('h2', {}, 'Timeline'),
  rolloutTimeline(t),
  el('h2', {}, 'Settings'),
  settingsFacts(u.settings),
  el('h2', {}, 'Update events'),
  updateTimeline(u),
  el('h2', {}, 'Instance events'),
  instanceTimeline(u),
  u.instance_events_total > u.instance_events.length
    ? el('p', { class: 'muted' }, 'Showing the newest ' + u.instance_events.length + ' of ' +
      u.instance_events_total + ' instance events.') : '',
  el('h2', {}, 'Configuration change'),
  diffView(u.diff));
}

/* Links to the newer and older pages of the list at @route ('#/updates'),
   @shown items from @offset on. */
function pager(route, params, offset, shown, more) {
  const page = (o) => {
    const next = new URLSearchParams(params);
    next.set('offset', Math.max(0, o));
    return route + '?' + next.toString();
  };
  return el('nav', { class: 'pager', 'aria-label': 'Pages' },
    offset > 0 ? el('a', { href: page(offset - PAGE_SIZE) }, '← Newer') : '',
    el('span', { class: 'muted' }, shown ? (offset + 1) + '–' + (offset + shown) : ''),
    more ? el('a', { href: page(offset + PAGE_SIZE) }, 'Older →') : '');
}

async function viewUpdates(params) {
  setNav('updates');
  const offset = Number(params.get('offset') || 0);
  const api = new URLSearchParams();
  for (const k of ['role', 'job', 'status', 'user']) if (params.get(k)) api.set(k, params.get(k));
  api.set('offset', offset);
  api.set('limit', PAGE_SIZE);
  const data = await getJSON('/ui/api/updates?' + api.toString());

  const field = (name, label, placeholder) => el('label', {}, label,
    el('input', { name, value: params.get(name) || '', placeholder }));
  const statusSelect = el('select', { name: 'status' }, el('option', { value: '' }, 'any'),
    ALL_STATUSES.map((s) => el('option', { value: s, selected: params.get('status') === s },
      s.replace(/_/g, ' ').toLowerCase())));
  const form = el('form', {
    class: 'filters', role: 'search',
    onsubmit: (ev) => {
      ev.preventDefault();
      const next = new URLSearchParams();
      for (const [k, v] of new FormData(form)) if (v) next.set(k, v);
      location.hash = '#/updates' + (next.toString() ? '?' + next.toString() : '');
    },
  }, field('role', 'Role', 'www'), field('job', 'Job', 'role/env/name'),
  el('label', {}, 'Status', statusSelect), field('user', 'User', 'alice'),
  el('button', { type: 'submit' }, 'Filter'));

  show(el('h1', {}, 'Updates'), form,
    data.updates.length ? summaryTable(data.updates) : el('p', { class: 'muted' }, 'No updates match.'),
    pager('#/updates', params, offset, data.updates.length, data.more));
}

async function viewHosts() {
  setNav('hosts');
  const data = await getJSON('/ui/api/hosts');
  if (data.hosts === null) {
    show(el('h1', {}, 'Hosts'), el('p', { class: 'notice' }, data.why));
    return;
  }
  const rows = data.hosts.map((h) => {
    const jobs = {};
    for (const i of h.instances) {
      const key = jobLabel(i);
      (jobs[key] = jobs[key] || { job: i, ids: [] }).ids.push(i.id);
    }
    const state = !h.reachable ? 'UNREACHABLE' : h.draining ? 'DRAINING' : 'UP';
    return el('tr', {},
      el('td', {}, h.name),
      el('td', {}, badge(h.mode), h.sla_wait
        ? h.sla_wait.split('\n').map((w) => el('div', { class: 'muted' }, w)) : ''),
      el('td', {}, badge(state), !h.reachable
        ? [' ', el('span', { class: 'muted' }, 'for ' + duration(data.now_ms - h.unreachable_since_ms)),
          h.last_error ? el('div', { class: 'muted' }, h.last_error) : '']
        : h.draining && h.instances.length && h.drain_blocked
          ? el('div', { class: 'muted' }, 'The drain waits, nothing stopped, for room elsewhere: '
            + h.drain_blocked)
          : ''),
      el('td', { class: 'num' }, h.instances.length),
      el('td', {}, Object.keys(jobs).sort().map((k) => el('span', { class: 'chip' },
        el('a', { href: '#/job/' + jobPath(jobs[k].job) }, k), ' × ' + jobs[k].ids.length))),
      el('td', { class: 'hide-narrow' }, h.address),
      el('td', { class: 'hide-narrow' }, Object.keys(h.attributes).sort()
        .map((k) => el('span', { class: 'chip' }, k + '=' + h.attributes[k]))));
  });
  show(el('h1', {}, 'Hosts'),
    el('div', { class: 'table-wrap' }, el('table', {},
      el('thead', {}, el('tr', {}, el('th', {}, 'Host'), el('th', {}, 'Maintenance'), el('th', {}, 'State'),
        el('th', { class: 'num' }, 'Instances'), el('th', {}, 'Jobs'),
        el('th', { class: 'hide-narrow' }, 'Address'), el('th', { class: 'hide-narrow' }, 'Attributes'))),
      el('tbody', {}, rows))),
    el('p', { class: 'muted' }, 'Maintenance: stagger host maintenance start|drain|sla-drain|status|end HOST; or move a host\'s instances off with stagger host drain HOST'));
}

/* ---- rollout plans ---------------------------------------------------------- */

function planPath(id) {
  return '#/plan/' + encodeURIComponent(id);
}

function updatePath(job, id) {
  return '#/update/' + jobPath(job) + '/' + encodeURIComponent(id);
}

/* "for 3m 20s" since @ms, with the time itself. */
function sinceEl(ms, now) {
  return [timeEl(ms), el('span', { class: 'muted' }, ' (for ' + duration(now - ms) + ')')];
}

/* Conditions (Progressing, Complete, Failed) as chips: type, status,
   reason; the message and since when in the title. */
function conditionsEl(list) {
  if (!list || !list.length) return '–';
  return el('span', { class: 'conditions' }, list.map((c) => el('span', {
    class: 'chip condition ' + (c.status === 'True' ? 'on' : 'off') + (c.type === 'Failed' ? ' failed' : ''),
    'data-condition': c.type, 'data-status': c.status, 'data-reason': c.reason,
    title: (c.message || c.reason) + ' (since ' + when(c.last_transition_ms) + ')',
  }, c.type + ': ' + c.status + (c.reason ? ' · ' + c.reason : ''))));
}

function reasonText(x) {
  return x.reason || ROLLOUT_WORDS[x.status] || '';
}

/* @back: the plan went back, so its bar is never the green of success. */
function stagesBar(p) {
  const back = /BACK/.test(p.status);
  return progressBar(p.stages_done, 0, 0, p.stage_count, back);
}

async function viewPlans(params) {
  setNav('plans');
  const offset = Number(params.get('offset') || 0);
  const active = params.get('active') === '1';
  const api = new URLSearchParams({ offset, limit: PAGE_SIZE });
  if (active) api.set('active', '1');
  const data = await getJSON('/ui/api/plans?' + api.toString());
  const rows = data.plans.map((p) => el('tr', {},
    el('td', {}, el('a', { href: planPath(p.id) }, p.name), ' ',
      el('span', { class: 'muted mono' }, p.id.slice(0, 8))),
    el('td', {}, badge(p.status, 'rollout')),
    el('td', {}, stagesBar(p), el('span', { class: 'muted' }, p.stages_done + '/' + p.stage_count)),
    el('td', {}, reasonText(p)),
    el('td', {}, p.user || '–'),
    el('td', { class: 'hide-narrow' }, timeEl(p.created_ms)),
    el('td', { class: 'hide-narrow' }, sinceEl(p.since_ms, data.now_ms))));
  show(el('h1', {}, 'Rollout plans'),
    el('p', {}, active ? el('a', { href: '#/plans' }, 'Show all plans')
      : el('a', { href: '#/plans?active=1' }, 'Show only active plans')),
    data.plans.length === 0
      ? el('p', { class: 'notice' }, active ? 'No plan is active.'
        : 'No rollout plans yet. Start one through the Thrift API (startRolloutPlan).')
      : el('div', { class: 'table-wrap' }, el('table', {},
        el('thead', {}, el('tr', {}, el('th', {}, 'Plan'), el('th', {}, 'Status'),
          el('th', {}, 'Stages done'), el('th', {}, 'Why'), el('th', {}, 'User'),
          el('th', { class: 'hide-narrow' }, 'Started'), el('th', { class: 'hide-narrow' }, 'Since'))),
        el('tbody', {}, rows))),
    pager('#/plans', params, offset, data.plans.length, data.more));
}

function planAct(plan, action, body, confirmText) {
  if (confirmText && !window.confirm(confirmText)) return;
  control('/ui/api/plan/' + encodeURIComponent(plan.id) + '/' + action,
    Object.assign({ message: 'from the web page' }, body || {}), action);
}

function planControls(p) {
  if (!session.can_act) return '';
  const ended = ROLLOUT_ENDED.has(p.status);
  const waiting = p.stages.some(stageAwaitsApproval);
  return el('div', { class: 'controls' },
    ended ? '' : p.status === 'PAUSED'
      ? el('button', { onclick: () => planAct(p, 'resume') }, 'Resume')
      : el('button', { onclick: () => planAct(p, 'pause') }, 'Pause'),
    !ended && waiting ? el('button', { onclick: () => planAct(p, 'approve', { stage: '' },
      'Approve every stage waiting for approval?') }, 'Approve all waiting') : '',
    p.status === 'ROLLED_BACK' || p.status === 'ROLLING_BACK' ? ''
      : el('button', { class: 'danger', onclick: () => planAct(p, 'rollback', null,
        'Roll this plan back? Every stage that changed its job goes back to the configuration ' +
        'from before the plan, in reverse order.') }, 'Roll back'),
    ended ? '' : el('button', { class: 'danger', onclick: () => planAct(p, 'abort', null,
      'Abort this plan? Its running updates are aborted; nothing is rolled back.') }, 'Abort'));
}

function stageAwaitsApproval(s) {
  return s.status === 'AWAITING_APPROVAL' ||
    (s.status === 'PENDING' && s.require_approval && !s.approved_by);
}

/* One gate and its latest attempt. */
function gateItem(g) {
  const last = g.last;
  return el('li', {}, el('strong', {}, g.name), ' ', el('span', { class: 'chip' },
    g.kind.replace(/_/g, ' ').toLowerCase()),
    ' ', el('span', { class: 'mono' }, g.description),
    el('span', { class: 'muted' }, ' (timeout ' + g.timeout_s + 's' +
      (g.retries ? ', ' + g.retries + ' retries ' + g.retry_interval_s + 's apart' : '') + ')'),
    last ? el('div', { class: last.passed ? 'gate-ok' : 'gate-bad' },
      (last.passed ? '✓ passed' : '✗ failed') + ' (attempt ' + last.attempt + ', ', timeEl(last.ts_ms),
      ')' + (last.message ? ': ' + last.message : '')) : '');
}

function gateGroup(title, gates, counted, passed, note) {
  if (!gates.length) return '';
  return el('div', { class: 'gate-group' },
    el('h4', {}, title, counted ? el('span', { class: 'muted' }, ' — ' + passed + ' of ' +
      gates.length + ' passed') : ''),
    el('ul', { class: 'gates' }, gates.map(gateItem)),
    note ? el('p', { class: 'muted' }, note) : '');
}

/* The stage's place in the plan: one more than the deepest stage it waits for. */
function stageDepths(stages) {
  const depth = {};
  for (const s of stages) depth[s.name] = 1 + Math.max(-1, ...s.depends_on.map((d) => depth[d] || 0));
  return depth;
}

/* Where the stage moves its job now: forward to the plan's version, or
   back (where a rollback ended once it is ROLLED_BACK). */
function stageVersions(s) {
  const back = s.status === 'ROLLING_BACK' || s.status === 'ROLLED_BACK';
  return [s.current_version ? 'runs v' + s.current_version : 'not running',
    back && s.target_version ? (s.status === 'ROLLED_BACK' ? 'went back to v' : 'going back to v') +
      s.target_version + (s.desired_version ? ' from the plan’s v' + s.desired_version : '')
      : s.desired_version ? 'the plan’s v' + s.desired_version : '',
    s.previous_version && !back ? 'v' + s.previous_version + ' before the plan' : '']
    .filter(Boolean).join(' · ');
}

/* READY/DESIRED, and why each instance not ready is not. */
function readiness(s) {
  const full = s.ready >= s.desired;
  return el('div', { class: 'readiness', 'data-ready': s.ready, 'data-desired': s.desired },
    'Ready: ', el('strong', { class: full ? 'gate-ok' : 'gate-bad' }, s.ready + '/' + s.desired),
    s.unready.length ? el('ul', { class: 'unready' }, s.unready.slice(0, 10).map((u) =>
      el('li', { 'data-instance': u.instance }, 'instance ' + u.instance + ': ' + u.reason)),
    s.unready.length > 10 ? el('li', { class: 'muted' }, 'and ' + (s.unready.length - 10) + ' more') : '')
      : '');
}

function stageItem(p, s, depth) {
  const g = s.gates;
  const versions = stageVersions(s);
  const approve = session.can_act && !ROLLOUT_ENDED.has(p.status) && stageAwaitsApproval(s)
    ? el('button', { onclick: () => planAct(p, 'approve', { stage: s.name }) }, 'Approve') : '';
  return el('li', { class: 'stage ' + s.status + ' depth-' + Math.min(depth, 4), 'data-stage': s.name },
    el('h3', {}, el('span', {}, s.name), badge(s.status, 'rollout'),
      el('a', { href: '#/job/' + jobPath(s.job_key) }, s.job)),
    s.depends_on.length ? el('div', { class: 'muted' }, 'after ' + s.depends_on.join(', ')) : '',
    el('div', { class: 'reason' }, reasonText(s), ' — since ', sinceEl(s.since_ms, p.now_ms)),
    el('div', {}, 'Version: ' + versions),
    readiness(s),
    el('div', { class: 'stage-conditions' }, conditionsEl(s.conditions)),
    s.update || s.rollback_update ? el('div', {},
      s.update ? ['Update ', el('a', { href: updatePath(s.job_key, s.update) }, s.update.slice(0, 8))] : '',
      s.rollback_update ? [s.update ? ' · ' : '', 'Rollback update ',
        el('a', { href: updatePath(s.job_key, s.rollback_update) }, s.rollback_update.slice(0, 8))] : '')
      : '',
    s.require_approval ? el('div', {}, s.approved_by ? 'Approved by ' + s.approved_by
      : 'Needs approval', ' ', approve) : '',
    gateGroup('Gates before its update', g.before, g.phase === 'before' && !ROLLOUT_ENDED.has(s.status),
      g.passed),
    gateGroup('Gates between batches', g.between_batches, false, 0,
      'Their attempts are events of the stage’s update.'),
    gateGroup('Gates after its update', g.after, g.phase === 'after' && !ROLLOUT_ENDED.has(s.status),
      g.passed));
}

/* Each stage status's colour on the plan's timeline. */
const STAGE_COLOURS = {
  PENDING: '--pending', WAITING_FOR_GATE: '--gate', AWAITING_APPROVAL: '--pulse',
  ROLLING_FORWARD: '--updating', DONE: '--updated', FAILED: '--failed',
  ROLLING_BACK: '--rolling-back', ROLLED_BACK: '--rolled-back', ABORTED: '--failed',
  PAUSED: '--paused',
};

/* The plan's time, stage by stage: a row per stage with the statuses its
   events gave it (waiting for gates, for approval, its update rolling, done,
   rolled back...) across the plan's time, and its gate attempts as ticks
   (passed, failed). The spans are in the canvas's data-spans
   ("stage:STATUS@from-to,...;...") for a reader. */
function planTimeline(p) {
  const from = p.created_ms;
  const last = p.events.reduce((m, e) => Math.max(m, e.ts_ms), from);
  const to = Math.max(ROLLOUT_ENDED.has(p.status) ? last : p.now_ms, from + 1);
  const rows = p.stages.map((s) => {
    const evs = p.events.filter((e) => e.stage === s.name).sort((a, b) => a.ts_ms - b.ts_ms);
    return {
      name: s.name,
      spans: evs.map((e, i) => ({ status: e.status, from_ms: e.ts_ms,
        to_ms: i + 1 < evs.length ? evs[i + 1].ts_ms : to })),
      gates: p.gate_results.filter((g) => g.stage === s.name),
    };
  });
  const canvas = el('canvas', { class: 'plan-timeline', role: 'img',
    'aria-label': 'Each stage\'s statuses over the plan\'s time' });
  canvas.dataset.spans = rows.map((r) => r.name + ':' + r.spans.map((s) => s.status + '@' +
    s.from_ms + '-' + s.to_ms).join(',')).join(';');
  const span = to - from;
  function draw() {
    const width = Math.max(canvas.clientWidth, 100);
    const label = Math.min(160, width / 4);
    const row = 14;
    const gap = 6;
    const height = rows.length * (row + gap) + gap;
    const ctx = canvasContext(canvas, width, height);
    const colour = cssColours();
    const x = (ms) => label + (ms - from) / span * (width - label);
    ctx.font = '12px sans-serif';
    ctx.textBaseline = 'middle';
    rows.forEach((r, i) => {
      const y = gap + i * (row + gap);
      ctx.fillStyle = colour('--fg');
      ctx.fillText(r.name, 0, y + row / 2, label - 6);
      for (const s of r.spans) {
        ctx.fillStyle = colour(STAGE_COLOURS[s.status] || '--pending');
        /* A stage's end (done, failed, rolled back) is a moment: a cap wide
           enough to see. */
        const end = ROLLOUT_ENDED.has(s.status) ? 6 : 1;
        ctx.fillRect(Math.min(x(s.from_ms), width - end), y, Math.max(end, x(s.to_ms) - x(s.from_ms)), row);
      }
      for (const g of r.gates) {
        ctx.fillStyle = colour(g.passed ? '--updated' : '--failed');
        ctx.fillRect(Math.round(x(g.ts_ms)) - 1, y - 3, 2, row + 6);
      }
    });
  }
  new ResizeObserver(() => draw()).observe(canvas);
  requestAnimationFrame(draw);
  const used = new Set(rows.flatMap((r) => r.spans.map((s) => s.status)));
  return el('section', { class: 'plan-timeline' },
    el('p', { class: 'timeline-summary' }, (ROLLOUT_ENDED.has(p.status) ? 'Took ' : 'So far ') +
      duration(span) + '; a row per stage, ticks where a gate was tried.'),
    el('div', { class: 'legend' }, Object.keys(STAGE_COLOURS).filter((k) => used.has(k)).map((k) =>
      el('span', {}, el('i', { style: 'background: var(' + STAGE_COLOURS[k] + ')' }),
        k.toLowerCase().replace(/_/g, ' ')))),
    rows.some((r) => r.spans.length) ? canvas : el('p', { class: 'muted' }, 'No stage has begun yet.'));
}

async function viewPlan(id) {
  setNav('plans');
  const p = await getJSON('/ui/api/plan?id=' + encodeURIComponent(id));
  const depth = stageDepths(p.stages);
  const facts = [
    ['Status', badge(p.status, 'rollout')],
    ['Why', reasonText(p) || '–'],
    ['Since', sinceEl(p.since_ms, p.now_ms)],
    ['Started by', p.user || '–'],
    ['Started', when(p.created_ms)],
    ['Stages done', p.stages_done + ' of ' + p.stage_count],
    ['Roll back on failure', p.rollback_on_failure ? 'yes' : 'no'],
    ['Conditions', conditionsEl(p.conditions)],
  ];
  const vars = Object.keys(p.variables || {});
  if (vars.length) {
    facts.push(['Variables', el('span', { class: 'variables' }, vars.map((k) =>
      el('span', { class: 'chip mono' }, k + '=' + p.variables[k])))]);
  }
  const attempts = p.gate_results.slice().reverse().map((r) => el('tr', {},
    el('td', {}, timeEl(r.ts_ms)), el('td', {}, r.stage), el('td', {}, r.phase), el('td', {}, r.gate),
    el('td', { class: 'num' }, r.attempt),
    el('td', { class: r.passed ? 'gate-ok' : 'gate-bad' }, r.passed ? 'passed' : 'failed'),
    el('td', {}, r.message)));
  show(el('h1', {}, 'Rollout plan ', p.name, ' ', el('span', { class: 'mono muted' }, p.id)),
    planControls(p),
    el('dl', { class: 'facts' }, facts.map(([k, v]) => el('div', {}, el('dt', {}, k), el('dd', {}, v)))),
    stagesBar(p),
    el('h2', {}, 'Timeline'),
    planTimeline(p),
    el('h2', {}, 'Stages'),
    el('ol', { class: 'stages' }, p.stages.map((s) => stageItem(p, s, depth[s.name]))),
    el('h2', {}, 'Plan events'),
    timeline('plan-events', p.events.map((e) => ({ ts: e.ts_ms, node: [badge(e.status, 'rollout'), ' ',
      e.stage ? 'stage ' + e.stage + ' ' : '', e.user ? 'by ' + e.user : '',
      e.message ? ' — ' + e.message : ''] }))),
    el('h2', {}, 'Gate attempts'),
    attempts.length ? el('div', { class: 'table-wrap' }, el('table', {},
      el('thead', {}, el('tr', {}, el('th', {}, 'When'), el('th', {}, 'Stage'), el('th', {}, 'Phase'),
        el('th', {}, 'Gate'), el('th', { class: 'num' }, 'Attempt'), el('th', {}, 'Result'),
        el('th', {}, 'Message'))),
      el('tbody', {}, attempts))) : el('p', { class: 'muted' }, 'No gate tried yet.'));
}

/* ---- sidecar sets ------------------------------------------------------------ */

function selectorText(sel) {
  return sel.role + '/' + sel.environment + '/' + sel.name;
}

/* "v1 → v2" of a set's last update (the way back while it rolls back). */
function sidecarMove(s) {
  return s.from_version ? 'v' + s.from_version + ' → v' + s.to_version : 'v' + s.to_version;
}

async function viewSidecars() {
  setNav('sidecars');
  const data = await getJSON('/ui/api/sidecars');
  const rows = data.sets.map((s) => el('tr', {},
    el('td', {}, el('a', { href: '#/sidecar/' + encodeURIComponent(s.name) }, s.name)),
    el('td', {}, selectorText(s.selector)),
    el('td', {}, sidecarMove(s)),
    el('td', {}, badge(s.status, 'update')),
    el('td', {}, progressBar(s.updated, 0, 0, s.instances), ' ' + s.updated + '/' + s.instances),
    el('td', { class: 'num' }, 'v' + s.inject_version),
    el('td', { class: 'hide-narrow' }, timeEl(s.since_ms))));
  show(el('h1', {}, 'Sidecar sets'),
    data.sets.length === 0
      ? el('p', { class: 'muted' }, 'No sidecar sets yet. Apply one with stagger sidecar apply FILE (fleet runtime).')
      : el('div', { class: 'table-wrap' }, el('table', {},
        el('thead', {}, el('tr', {}, el('th', {}, 'Set'), el('th', {}, 'Selects'), el('th', {}, 'Update'),
          el('th', {}, 'Status'), el('th', {}, 'Updated'), el('th', { class: 'num' }, 'New pods get'),
          el('th', { class: 'hide-narrow' }, 'Since'))),
        el('tbody', {}, rows))));
}

/* A pod's container slots: "proxy-1 v2 (serving)", "proxy-2 empty". */
function slotChips(i) {
  return i.slots.map((sl) => el('span', { class: 'chip' }, sl.name + ' ',
    !sl.container_id ? '–' : sl.version === 0 ? 'empty' : 'v' + sl.version,
    sl.serving ? el('strong', {}, ' serving') : ''));
}

/* A sidecar set's update controls, as the update page has them. */
function sidecarControls(s) {
  if (!session.can_act || !ACTIVE.has(s.status)) return '';
  const act = (action, confirmText) => async () => {
    if (confirmText && !window.confirm(confirmText)) return;
    await control('/ui/api/sidecar/' + encodeURIComponent(s.name) + '/' + action,
      { message: 'from the web page' }, action);
  };
  const paused = s.status.endsWith('_PAUSED');
  const forward = s.status.startsWith('ROLL_FORWARD') || s.status === 'ROLLING_FORWARD';
  return el('div', { class: 'controls' },
    paused ? el('button', { onclick: act('resume') }, 'Resume')
      : el('button', { onclick: act('pause') }, 'Pause'),
    forward ? el('button', { class: 'danger', onclick: act('rollback',
      'Roll this sidecar update back? Its pods get the previous sidecar version again.') }, 'Roll back') : '',
    el('button', { class: 'danger', onclick: act('abort',
      'Abort this sidecar update? Pods stay as they are now.') }, 'Abort'));
}

/* What the viewer has typed into a set's "new version" form: the page
   re-renders on every change of its pods, and the draft (and the field
   being typed in) survives that. */
let sidecarDraft = null;

/* A new version of the set's sidecar from the page: the image and the
   executor data new pods get now, changed and applied with the set's
   selector and settings (POST /ui/api/sidecar/NAME/apply). Offered while
   no update of the set is under way. */
function sidecarApplyForm(s) {
  if (!session.can_act || ACTIVE.has(s.status)) return '';
  const now = s.versions.find((v) => v.version === s.inject_version) || {};
  if (!sidecarDraft || sidecarDraft.name !== s.name) {
    sidecarDraft = { name: s.name, open: false, image: now.image || '',
      executor_data: now.executor_data || '', message: '' };
  }
  const d = sidecarDraft;
  /* The field being typed in now (the page about to be replaced still
     shows it), to type on in after the re-render. */
  const typing = document.activeElement && document.activeElement.closest &&
    document.activeElement.closest('form.apply') ? document.activeElement : null;
  const field = (tag, name, attrs, text) => {
    const f = el(tag, Object.assign({ name, id: 'sidecar-' + name }, attrs), text);
    f.value = d[name];
    f.addEventListener('input', () => { d[name] = f.value; });
    return f;
  };
  const form = el('form', {
    class: 'apply',
    onsubmit: async (ev) => {
      ev.preventDefault();
      const body = { image: d.image.trim(), message: d.message.trim() || 'from the web page' };
      if (d.executor_data.trim() !== (now.executor_data || '').trim()) body.executor_data = d.executor_data;
      if (body.image === (now.image || '') && !body.executor_data) {
        window.alert('Nothing to apply: change the image or the executor data first.');
        return;
      }
      sidecarDraft = null;
      await control('/ui/api/sidecar/' + encodeURIComponent(s.name) + '/apply', body,
        'apply the new version');
    },
  },
  el('label', { for: 'sidecar-image' }, 'Image'),
  field('input', 'image', { required: true, size: 50, spellcheck: 'false' }),
  el('label', { for: 'sidecar-executor_data' }, 'Executor data (JSON)'),
  field('textarea', 'executor_data', { rows: 6, cols: 70, spellcheck: 'false' }),
  el('label', { for: 'sidecar-message' }, 'Message'),
  field('input', 'message', { size: 50, placeholder: 'why (optional)' }),
  el('div', {}, el('button', { type: 'submit' }, 'Apply'), el('span', { class: 'muted' },
    ' New version v' + (s.version + 1) + ', at most ' + s.settings.max_unavailable +
    ' instance(s) at a time, partition ' + s.settings.partition)));
  const box = el('details', { class: 'apply', open: d.open },
    el('summary', {}, 'Roll out a new version'), form);
  box.addEventListener('toggle', () => { d.open = box.open; });
  if (typing) {
    const f = form.elements[typing.name];
    const [from, to] = [typing.selectionStart, typing.selectionEnd];
    queueMicrotask(() => {
      if (!f || !f.isConnected) return;
      f.focus({ preventScroll: true });
      f.setSelectionRange(from, to);
    });
  }
  return box;
}

async function viewSidecar(name) {
  setNav('sidecars');
  const s = await getJSON('/ui/api/sidecar?name=' + encodeURIComponent(name));
  const st = s.settings;
  const rows = s.members.map((i) => el('tr', {},
    el('td', {}, el('a', { href: '#/job/' + i.job.split('/').map(encodeURIComponent).join('/') },
      i.job), '/' + i.instance, i.held_back ? el('span', { class: 'muted' }, ' (held back)') : ''),
    el('td', {}, i.host || '–'),
    el('td', { class: 'num' }, i.version ? 'v' + i.version : '–'),
    el('td', { class: 'num' }, 'v' + i.want_version),
    el('td', {}, badge(i.status)),
    el('td', {}, slotChips(i)),
    el('td', { class: 'muted' }, i.reason)));
  const events = s.events.slice(-50).reverse().map((e) => el('li', {}, timeEl(e.timestamp_ms), ' ',
    e.job ? e.job + '/' + e.instance : badge(e.status, 'update'), ' ', e.message,
    e.user ? el('span', { class: 'muted' }, ' (' + e.user + ')') : ''));
  show(el('h1', {}, 'Sidecar set ', s.name),
    sidecarControls(s),
    sidecarApplyForm(s),
    el('p', {}, badge(s.status, 'update'), ' ', sidecarMove(s), ' since ', timeEl(s.since_ms),
      s.reason ? el('span', { class: 'muted' }, ' — ' + s.reason) : ''),
    el('p', {}, 'Selects ', el('code', {}, selectorText(s.selector)), '; new pods get v' + s.inject_version,
      '; ' + s.updated + ' of ' + s.instances + ' instances run v' + s.to_version,
      '; at most ' + st.max_unavailable + ' unavailable, partition ' + st.partition
      + ', at most ' + st.max_failures + ' failed starts each'
      + (st.rollback_on_failure ? ', rolled back on failure' : '')),
    el('div', { class: 'table-wrap' }, el('table', {},
      el('thead', {}, el('tr', {}, el('th', {}, 'Instance'), el('th', {}, 'Host'),
        el('th', { class: 'num' }, 'Serving'), el('th', { class: 'num' }, 'Wanted'), el('th', {}, 'Status'),
        el('th', {}, 'Slots'), el('th', {}, 'Why'))),
      el('tbody', {}, rows))),
    el('h2', {}, 'Versions'),
    el('ul', {}, s.versions.map((v) => el('li', {}, 'v' + v.version + ' ', el('code', {}, v.image),
      v.socket_activation ? ' (socket activation)' : '', ' ', timeEl(v.created_ms),
      v.user ? el('span', { class: 'muted' }, ' (' + v.user + ')') : ''))),
    el('h2', {}, 'Events'),
    el('ul', { class: 'events' }, events),
    el('p', { class: 'muted' }, 'From a file: stagger sidecar apply FILE; the partition: stagger ' +
      'sidecar partition ' + s.name + ' N'));
}

/* ---- routing and live changes ------------------------------------------------ */

function route() {
  const hash = location.hash.replace(/^#/, '') || '/';
  const [path, query] = hash.split('?');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  const params = new URLSearchParams(query || '');
  if (parts.length === 0) return { render: viewJobs, matches: () => true };
  if (parts[0] === 'job' && parts.length === 4) {
    return {
      render: () => viewJob(parts[1], parts[2], parts[3]),
      matches: (c) => c.role === parts[1] && c.environment === parts[2] && c.name === parts[3],
    };
  }
  if (parts[0] === 'update' && parts.length === 5) {
    return {
      render: () => viewUpdate(parts[1], parts[2], parts[3], parts[4]),
      matches: (c) => c.kind !== 'job' && c.id === parts[4],
    };
  }
  if (parts[0] === 'updates') return { render: () => viewUpdates(params), matches: (c) => c.kind === 'update' };
  if (parts[0] === 'plans' && parts.length === 1) {
    return { render: () => viewPlans(params), matches: (c) => c.kind === 'plan' };
  }
  if (parts[0] === 'plan' && parts.length === 2) {
    /* Its stages' readiness moves with their jobs' instances. */
    return {
      render: () => viewPlan(parts[1]),
      matches: (c) => (c.kind === 'plan' && c.id === parts[1]) || c.kind === 'job',
    };
  }
  /* Instances moving between hosts change their jobs: any change re-reads. */
  if (parts[0] === 'hosts' && parts.length === 1) return { render: viewHosts, matches: () => true };
  /* A pod's sidecars change with its instance: any change re-reads. */
  if (parts[0] === 'sidecars' && parts.length === 1) return { render: viewSidecars, matches: () => true };
  if (parts[0] === 'sidecar' && parts.length === 2) {
    return { render: () => viewSidecar(parts[1]), matches: () => true };
  }
  return {
    render: async () => show(el('h1', {}, 'Not found'), el('p', {}, 'There is no page here. ',
      el('a', { href: '#/' }, 'See all jobs.'))),
    matches: () => false,
  };
}

let rendering = false;
let again = false;
/* How long the view's last render took (its reads and drawing). A big
   page (an update of 10,000 instances) repaints at most every twice that,
   so following it live keeps neither the browser nor staggerd busy more
   than a third of the time. */
let renderMs = 0;

function paced(ms) {
  return Math.max(ms, 2 * renderMs);
}

async function refresh() {
  if (!current) return;
  if (rendering) { again = true; return; }
  rendering = true;
  const y = window.scrollY;
  const began = performance.now();
  try {
    await current.render();
    window.scrollTo(0, y);
  } catch (err) {
    show(...failure(err));
  }
  renderMs = performance.now() - began;
  rendering = false;
  if (again) { again = false; setTimeout(refresh, paced(250)); }
}

function navigate() {
  renderMs = 0;
  current = route();
  window.scrollTo(0, 0);
  refresh().then(() => document.getElementById('main').focus({ preventScroll: true }));
}

function setLive(on, text) {
  const l = document.getElementById('live');
  l.className = 'live ' + (on ? 'on' : 'off');
  l.textContent = text;
}

/* Changes arrive in bursts; repaint at most a few times a second, and a
   slow page less often (paced()). */
let pending = false;
function onChange(change) {
  if (!current || !current.matches(change) || pending) return;
  pending = true;
  setTimeout(() => { pending = false; refresh(); }, paced(200));
}

function startPolling() {
  if (pollTimer) return;
  setLive(false, 'polling');
  pollTimer = setInterval(refresh, 1000);
}

/* ---- failover: finding the new leader ----------------------------------------
 * With several replicas, this page knows the others from /cluster. When the
 * live feed breaks, it asks its own replica's /health: a follower now (it
 * lost the lead) sends the page on to the leader; no answer three times in
 * a row means the replica is gone, and the page moves to the other replica
 * seen last, which sends it on to the leader. The page there says where it
 * came from. */
let replicas = [];   /* the other replicas' base URLs, the freshest first */
let silent = 0;      /* /health checks in a row that got no answer */
let checking = 0;    /* the check timer while the feed is broken */

async function learnReplicas() {
  try {
    const c = await getJSON('/cluster');
    replicas = (c.replicas || []).filter((r) => !r.self && r.role !== 'gone' && r.url)
      .sort((a, b) => b.seen_ms - a.seen_ms).map((r) => r.url.replace(/\/+$/, ''));
  } catch (e) { /* keep what we knew */ }
}

function failoverNotice(text) {
  const n = document.getElementById('failover');
  n.textContent = text;
  n.hidden = false;
}

function moveTo(base) {
  failoverNotice('The leader at ' + location.origin + ' does not answer; moving to ' + base +
    ', which sends this page to the new leader.');
  location.href = base + '/?from=' + encodeURIComponent(location.origin) + location.hash;
}

async function checkLeader() {
  try {
    const r = await fetch('/health', { cache: 'no-store' });
    const role = (await r.text()).trim();
    silent = 0;
    if (role === 'follower') moveTo(location.origin);
  } catch (e) {
    silent += 1;
    if (silent >= 3 && replicas.length) moveTo(replicas[0]);
  }
}

function watchLeader(broken) {
  if (broken && !checking) checking = setInterval(checkLeader, 1000);
  if (!broken && checking) { clearInterval(checking); checking = 0; silent = 0; }
}

function sayWhereFrom() {
  const from = new URLSearchParams(location.search).get('from');
  if (!from || from === location.origin) return;
  failoverNotice('The leader at ' + from + ' went away: this page followed the new leader, ' +
    location.origin + '.');
  history.replaceState(null, '', location.pathname + location.hash);
}

function connect() {
  if (!window.EventSource) { startPolling(); return; }
  live = new EventSource('/ui/api/events');
  live.addEventListener('open', () => {
    setLive(true, 'live');
    watchLeader(false);
    if (pollTimer) { clearInterval(pollTimer); pollTimer = 0; }
    refresh();
  });
  live.addEventListener('change', (ev) => {
    try { onChange(JSON.parse(ev.data)); } catch (e) { /* ignore a bad event */ }
  });
  live.addEventListener('error', () => {
    /* EventSource reconnects by itself; poll meanwhile so nothing goes stale,
     * and find the leader if this replica no longer leads. */
    startPolling();
    watchLeader(true);
  });
}

async function start() {
  try {
    session = await getJSON('/ui/api/session');
    document.getElementById('cluster').textContent = 'cluster ' + session.cluster;
    document.getElementById('foot').textContent = 'Stagger ' + session.version;
    /* With auth on, the controls need a signed-in user: the browser asks. */
    if (session.auth) {
      document.getElementById('cluster').after(session.user
        ? el('span', { class: 'muted' }, ' · ' + session.user)
        : el('a', { href: '/ui/login', class: 'signin' }, 'Sign in'));
    }
  } catch (err) {
    /* Views still work read-only. */
  }
  sayWhereFrom();
  learnReplicas();
  setInterval(learnReplicas, 30000);
  window.addEventListener('hashchange', navigate);
  navigate();
  connect();
}

start();
