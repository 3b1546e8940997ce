/**
 * The page's entry: reads the session, the task list and then follows the
 * fleet's events. Invariants: the list is fetched whole only at the start, when the backlog changes and
 * after the event stream reconnects; every `task` event changes one row of the model and repaints that
 * row alone; until the session says the page may act, no action control exists.
 */
export const APP_JS = String.raw`
import { el, fill, line } from './dom.js';
import { ApiError, get, session } from './api.js';
import { FleetModel } from './model.js';
import { ROW_HEIGHT, TaskList } from './list.js';
import { DetailPane, OutputLog, planText, TABS } from './detail.js';
import { ACTIONS, ALLOWED, commandFor, Confirm, KEYS } from './actions.js';
import { renderMarkdown } from './markdown.js';
import { renderChart } from './chart.js';
import { againstLimit, duration, meter, ratioClass, STATE_SYMBOL, STATUS_ORDER, STATUS_SYMBOL, tokens, usd } from './format.js';

const $ = (id) => document.getElementById(id);
const model = new FleetModel();
const output = new OutputLog();
const page = { readOnly: true, repo: '', base: '', gates: null, taskGates: null, summary: null, summaryAt: 0, view: 'tasks' };

function notice(text, cls) {
  const n = $('notice');
  n.className = cls ? 'notice ' + cls : 'notice';
  n.textContent = line(text);
}

function actionBar(row) {
  if (page.readOnly) return null;
  const bar = el('div', 'actions');
  for (const name of Object.keys(ALLOWED)) {
    if (!ALLOWED[name].includes(row.status)) continue;
    const b = el('button', 'action', ACTIONS[name].label);
    b.type = 'button';
    b.dataset.action = name;
    b.addEventListener('click', () => act(name));
    bar.append(b);
  }
  return bar;
}

const list = new TaskList($('list-viewport'), model, (id) => select(id));
const detail = new DetailPane($('detail'), output, actionBar);
/** The confirmation dialog; null until the session allows actions (in read-only mode the dialog is removed). */
let confirm = null;

function actionDone(error, p) {
  if (error) notice((p.id ? p.id + ': ' : '') + error.message, 'refusal');
  else notice((p.id ? p.id + ': ' : 'fleet: ') + ACTIONS[p.name].label + ' done', 'done');
  if (p.id && p.id === detail.id) detail.refresh();
}

function select(id) {
  if (!id || !model.get(id)) return;
  list.select(id);
  detail.show(id, model.get(id));
}

function act(name) {
  if (page.readOnly || confirm === null) return;
  const action = ACTIONS[name];
  if (!action.task) return confirm.open(name, null);
  const id = list.selected;
  if (id === null) return notice('select a task first', 'refusal');
  confirm.open(name, id, name === 'approve' ? (detail.data && detail.id === id ? planText(detail.data) : '') : null);
}

function gauge(label, value, limit, fmt) {
  const g = el('span', 'gauge');
  g.append(el('span', 'dim', label + ' '), el('span', 'num', againstLimit(value, limit, fmt)));
  if (limit) g.append(el('span', 'meter ' + ratioClass(value / limit), ' ' + meter(value / limit)));
  return g;
}

function fleetElapsed() {
  const s = page.summary;
  if (!s || !s.totals) return 0;
  return s.totals.elapsedMs + (s.state === 'running' ? Math.max(0, Date.now() - page.summaryAt) : 0);
}

/** The fleet bar: what it says (redrawn), and its buttons (built once, when the session allows actions). */
const bar = { info: el('span', 'bar-info'), toggle: null };

function buildBar() {
  const parts = [bar.info];
  if (!page.readOnly) {
    const buttons = el('span', 'fleet-actions');
    for (const name of ['merge-all', 'pause']) {
      const b = el('button', 'action', ACTIONS[name].label);
      b.type = 'button';
      b.dataset.action = name;
      b.addEventListener('click', () => act(b.dataset.action));
      buttons.append(b);
      if (name === 'pause') bar.toggle = b;
    }
    parts.push(buttons);
  } else parts.push(el('span', 'read-only', 'read-only'));
  fill($('fleet-bar'), ...parts);
}

function renderBar() {
  const s = page.summary;
  const state = s ? s.state : 'idle';
  const head = el('span', 'bar-head');
  head.append(el('strong', null, 'loopfleet'), document.createTextNode(' ' + line(page.repo) + (page.base ? ' \u2192 ' + line(page.base) : '') + '  '));
  head.append(el('span', 'state st-' + state, (STATE_SYMBOL[state] || '') + ' ' + state));
  const counts = el('span', 'counts');
  for (const st of STATUS_ORDER) {
    const n = model.counts[st] || 0;
    if (n === 0 && st !== 'running' && st !== 'queued') continue;
    const c = el('span', 'count s-' + st, STATUS_SYMBOL[st] + ' ' + n + ' ' + st);
    c.dataset.status = st;
    counts.append(c);
  }
  const totals = s && s.totals ? s.totals : { usage: null, costUsd: 0 };
  const usage = totals.usage ? totals.usage.input + totals.usage.output + totals.usage.cacheWrite + totals.usage.cacheRead : 0;
  const g = page.gates || {};
  const gauges = el('span', 'gauges');
  gauges.append(gauge('tokens', usage, g.tokens, tokens), gauge('cost', totals.costUsd || 0, g.costUsd, usd), gauge('time', fleetElapsed(), g.timeMs, duration));
  fill(bar.info, head, counts, gauges);
  // The buttons stay the same elements (a click is never lost to a redraw); only the pause one changes.
  if (bar.toggle !== null) {
    const name = state === 'paused' && !(s && s.hold) ? 'resume' : 'pause';
    if (bar.toggle.dataset.action !== name) {
      bar.toggle.dataset.action = name;
      bar.toggle.textContent = ACTIONS[name].label;
    }
  }
  const banner = $('banner');
  let words = '';
  if (s && s.hold) words = '\u2016 held: ' + s.hold.reason + (s.hold.until ? ' \u2014 until ' + new Date(s.hold.until).toLocaleTimeString() : '');
  else if (state === 'paused') words = '\u2016 paused: running attempts finish, no new one starts';
  if (s && s.stoppedBy) words = (words ? words + ' \u00b7 ' : '') + 'stopped by the ' + s.stoppedBy + ' gate';
  banner.hidden = words === '';
  banner.textContent = line(words);
}

/**
 * Task records that arrived since a list read began, kept until no read is under way. Each read, when it
 * lands, replaces the rows and applies them all again on top: the model skips a record older than its row
 * (updatedAt), so a read that was answered before some of them still ends with the newest of each task.
 */
let pending = null;
let reads = 0;

/** Reads the list (or takes a read already sent), then applies what arrived meanwhile; before: what to wait for first. */
async function loadTasks(reading, before) {
  if (reads++ === 0) pending = [];
  let rows;
  try {
    rows = await (reading || get('/api/tasks'));
    await before;
  } catch (e) {
    if (--reads === 0) pending = null;
    throw e;
  }
  const now = Date.now();
  model.reset(rows, now);
  for (const t of pending) model.apply(t, now);
  if (--reads === 0) pending = null;
  list.render();
  renderBar();
  if (list.selected === null || !model.get(list.selected)) {
    if (model.order.length > 0) select(model.order[0]);
  } else detail.changed(model.get(list.selected));
}

async function loadReport() {
  const chart = $('chart');
  const report = $('report');
  try {
    fill(chart, renderChart(await get('/api/timeline')));
  } catch (e) {
    fill(chart, el('p', 'error', 'no timeline: ' + e.message));
  }
  try {
    const r = await get('/api/report');
    const title = el('p', 'dim', r.name || '');
    const body = el('div', 'markdown');
    body.append(renderMarkdown(r.markdown || ''));
    fill(report, title, body);
  } catch (e) {
    fill(report, el('p', 'empty', e instanceof ApiError && e.status === 404 ? 'no report yet: a run writes one when it ends' : 'no report: ' + e.message));
  }
}

function showView(view) {
  page.view = view;
  $('tasks-view').hidden = view !== 'tasks';
  $('report-view').hidden = view !== 'report';
  for (const b of document.querySelectorAll('#views button')) b.setAttribute('aria-selected', b.dataset.view === view ? 'true' : 'false');
  if (view === 'report') loadReport();
}

function move(step) {
  const n = model.order.length;
  if (n === 0) return;
  const at = list.selected === null ? -1 : model.indexOf(list.selected);
  const next = Math.max(0, Math.min(n - 1, at < 0 ? 0 : at + step));
  select(model.order[next]);
}

function onKey(e) {
  if (document.querySelector('dialog[open]')) return;
  const command = commandFor(e, page.readOnly);
  if (command === null) return;
  e.preventDefault();
  const pageRows = Math.max(1, Math.floor(list.viewport.clientHeight / ROW_HEIGHT) - 1);
  switch (command) {
    case 'select-down': return move(1);
    case 'select-up': return move(-1);
    case 'select-first': return move(-Infinity);
    case 'select-last': return move(Infinity);
    case 'page-down': return move(pageRows);
    case 'page-up': return move(-pageRows);
    case 'next-tab': return detail.nextTab(1);
    case 'prev-tab': return detail.nextTab(-1);
    case 'tab': return detail.showTab(TABS[Number(e.key) - 1]);
    case 'view': return showView(page.view === 'tasks' ? 'report' : 'tasks');
    case 'help': return $('help').showModal();
    case 'pause': return act(page.summary && page.summary.state === 'paused' && !page.summary.hold ? 'resume' : 'pause');
    default: return act(command);
  }
}

function buildHelp() {
  const table = $('help-keys');
  for (const k of KEYS) {
    if (k.action && page.readOnly) continue;
    const tr = el('tr');
    tr.append(el('td', 'keys', k.keys.join(' ')), el('td', null, k.help));
    table.append(tr);
  }
}

/**
 * Follows the event stream. Each 'ready' says the stream is live from then on; the first list may have been
 * read before, so every 'ready' (the first, and each after a reconnect) reads the list again, and from then
 * nothing is missed.
 */
function follow(first) {
  const events = new EventSource('/api/events');
  const on = (name, f) =>
    events.addEventListener(name, (e) => {
      let data;
      try {
        data = JSON.parse(e.data);
      } catch {
        return notice('unreadable ' + name + ' event', 'refusal');
      }
      f(data);
    });
  on('task', (d) => {
    const t = d && d.task ? d.task : d;
    if (!t || typeof t.id !== 'string') return;
    if (pending !== null) return void pending.push(t);
    if (!model.apply(t, Date.now())) return void loadTasks();
    list.update(t.id);
    renderBar();
    if (t.id === detail.id) detail.changed(model.get(t.id));
  });
  on('usage', (d) => {
    // While the list is read, the row it brings (and the next report) carries the usage.
    if (pending === null && model.apply({ id: d.id, usage: d.task, costUsd: d.taskCostUsd }, Date.now())) list.update(d.id);
    if (d.fleet && page.summary) {
      page.summary = Object.assign({}, page.summary, { totals: d.fleet });
      page.summaryAt = Date.now();
      renderBar();
    }
  });
  on('agent-text', (d) => output.add(d.id, 'text', d.text));
  on('tool-call', (d) => output.add(d.id, 'tool', '\n\u2192 ' + d.name + ' ' + d.input + '\n'));
  on('phase-output', (d) => output.add(d.id, 'phase', d.chunk));
  on('fleet', (d) => {
    page.summary = d;
    page.summaryAt = Date.now();
    renderBar();
  });
  on('backlog', () => loadTasks());
  on('gate', (d) => notice((d.id ? d.id + ': ' : 'fleet: ') + d.reason, 'refusal'));
  on('log', (d) => notice((d.id ? d.id + ': ' : '') + d.message, d.level === 'info' ? '' : 'refusal'));
  on('ready', () => {
    document.body.dataset.live = 'true';
    // After the first read, not beside it: the first screen does not wait for a second list. A failed first
    // read is boot's to report; this read goes ahead regardless.
    first
      .catch(() => null)
      .then(() => loadTasks())
      .catch((e) => notice('could not read the tasks: ' + e.message, 'refusal'));
  });
  events.addEventListener('error', () => {
    document.body.dataset.live = 'false';
  });
}

/** What the session says: whether the page may act, the repository, the gates, the fleet's summary. */
function begin(s) {
  page.readOnly = s.readOnly !== false;
  page.repo = s.repo || s.repoRoot || '';
  page.base = s.base || '';
  page.gates = s.fleetGates || null;
  list.gates = s.gates || null;
  if (s.fleet || s.summary) {
    page.summary = s.fleet || s.summary;
    page.summaryAt = Date.now();
  }
  document.body.dataset.readOnly = String(page.readOnly);
  if (page.readOnly) $('confirm').remove();
  else confirm = new Confirm($('confirm'), actionDone);
  buildHelp();
  buildBar();
  for (const b of document.querySelectorAll('#views button')) b.addEventListener('click', () => showView(b.dataset.view));
  $('help-close').addEventListener('click', () => $('help').close());
  document.addEventListener('keydown', onKey);
}

async function boot() {
  // The list, the session and the event stream at once: the first screen waits for the slowest, not the sum.
  const first = loadTasks(get('/api/tasks'), session().then(begin));
  follow(first);
  await first;
  performance.mark('loopfleet:first-rows');
  document.body.dataset.ready = 'true';
  setInterval(() => {
    list.tick();
    renderBar();
  }, 1000);
}

boot().catch((e) => {
  notice('the page could not start: ' + e.message, 'refusal');
  document.body.dataset.ready = 'error';
});
`;
