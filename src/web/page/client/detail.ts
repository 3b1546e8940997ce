/**
 * The selected task's detail: its header and actions, then tabs for the
 * plan, the live agent output, the diff, the checks (counts, output and the baseline), the reviewer's
 * verdict, the attempt history and the predicted conflicts. The body comes from `GET /api/tasks/:id` and is
 * fetched again when the task's record changes (one request at a time; a change during one asks for one
 * more). The live output is kept per task from the SSE events, capped.
 */
export const DETAIL_JS = String.raw`
import { clean, el, fill, line, link } from './dom.js';
import { duration, STATUS_SYMBOL, tokens, usd } from './format.js';
import { get, taskPath } from './api.js';
import { renderDiff } from './diff.js';
import { renderMarkdown } from './markdown.js';

export const TABS = ['plan', 'output', 'diff', 'checks', 'review', 'history', 'conflicts'];
const OUTPUT_CAP = 64 * 1024;

/** Per task, the live output: the last OUTPUT_CAP characters of agent text, tool calls and phase output. */
export class OutputLog {
  constructor() {
    this.byId = new Map();
  }
  add(id, kind, text) {
    let log = this.byId.get(id);
    if (log === undefined) {
      log = { parts: [], size: 0, listeners: [] };
      this.byId.set(id, log);
    }
    const part = { kind, text: clean(text) };
    log.parts.push(part);
    log.size += part.text.length;
    let dropped = 0;
    while (log.size > OUTPUT_CAP && log.parts.length > 1) {
      log.size -= log.parts.shift().text.length;
      dropped++;
    }
    for (const f of log.listeners) f(part, dropped);
  }
  /** What the server saw before the page opened ({agent, phase} lines), kept before what came since. */
  seed(id, seen) {
    const log = this.byId.get(id) || { parts: [], size: 0, listeners: [] };
    this.byId.set(id, log);
    const before = [];
    for (const t of seen.agent || []) before.push({ kind: 'text', text: clean(t) });
    for (const t of seen.phase || []) before.push({ kind: 'phase', text: clean(t) });
    if (before.length === 0 || log.parts.length > 0) return;
    log.parts = before;
    log.size = before.reduce((n, p) => n + p.text.length, 0);
  }
  parts(id) {
    return this.byId.get(id)?.parts ?? [];
  }
  listen(id, f) {
    if (!this.byId.has(id)) this.byId.set(id, { parts: [], size: 0, listeners: [] });
    const log = this.byId.get(id);
    log.listeners.push(f);
    return () => {
      log.listeners = log.listeners.filter((g) => g !== f);
    };
  }
}

function section(title, ...children) {
  const s = el('section', 'block');
  s.append(el('h3', null, title), ...children.filter((c) => c));
  return s;
}

function pre(text, cls) {
  const p = el('pre', cls || 'text');
  p.textContent = clean(text);
  return p;
}

function countsText(c) {
  if (!c) return 'no test counts';
  return c.passed + ' passed, ' + c.failed + ' failed, ' + c.skipped + ' skipped of ' + c.total + (c.runner ? ' (' + c.runner + ')' : '');
}

function checkBlock(c, baseline) {
  const ok = c.exitCode === 0 && !c.timedOut;
  const judged = c.judged || (ok ? 'passed' : 'failed');
  const head = el('div', 'check-head');
  head.append(el('span', 'judged j-' + judged, judged), el('span', 'check-name', c.name || c.command));
  if (c.name && c.command && c.name !== c.command) head.append(el('code', null, c.command));
  head.append(
    el('span', 'dim', 'exit ' + (c.timedOut ? 'timed out' : c.exitCode) + (c.durationMs ? ' \u00b7 ' + duration(c.durationMs) : '')),
  );
  const box = el('div', 'check');
  box.append(head, el('div', 'counts', countsText(c.counts)));
  if (c.note) box.append(el('div', 'note', c.note));
  if (c.counts && Array.isArray(c.counts.failing) && c.counts.failing.length > 0) {
    const ul = el('ul', 'failing');
    for (const name of c.counts.failing) ul.append(el('li', null, name));
    box.append(ul);
  }
  const out = c.outputTail ?? c.output ?? null;
  if (out) box.append(pre(out, 'check-output'));
  const base = (baseline || []).find((b) => (b.name || b.command) === (c.name || c.command));
  if (base) {
    box.append(el('div', 'baseline', 'on base: exit ' + (base.timedOut ? 'timed out' : base.exitCode) + ' \u00b7 ' + countsText(base.counts)));
  }
  return box;
}

function checksTab(d) {
  const checks = Array.isArray(d.checks) ? d.checks : [];
  const baseline = Array.isArray(d.baseline) ? d.baseline : [];
  const s = el('div');
  if (d.checksAttempt) s.append(el('p', 'dim', 'attempt ' + d.checksAttempt));
  if (d.setup) s.append(checkBlock(Object.assign({ name: 'setup' }, d.setup), []));
  if (checks.length === 0) s.append(el('p', 'empty', 'no check has run yet'));
  for (const c of checks) s.append(checkBlock(c, baseline));
  if (d.proof) s.append(section('proof', el('p', null, d.proof.status + ': ' + (d.proof.message || ''))));
  if (baseline.length > 0 && checks.length === 0) for (const b of baseline) s.append(checkBlock(b, []));
  return s;
}

function reviewTab(d) {
  const v = d.review;
  if (!v) return el('p', 'empty', 'no verdict yet');
  const box = el('div', 'verdict ' + (v.pass ? 'pass' : 'veto'));
  box.append(el('p', 'verdict-word', (v.pass ? '\u2714 the reviewer passed it' : '\u2717 the reviewer vetoed it') + (v.attempt ? ' (attempt ' + v.attempt + ')' : '')));
  const ul = el('ul');
  for (const r of v.reasons || []) ul.append(el('li', null, r));
  box.append(ul);
  return box;
}

function historyTab(d) {
  const attempts = Array.isArray(d.history) ? d.history : [];
  if (attempts.length === 0) return el('p', 'empty', 'no attempt yet');
  const table = el('table', 'history');
  const head = el('tr');
  for (const h of ['#', 'outcome', 'started', 'took', 'tokens', 'cost', 'diff', 'reason']) head.append(el('th', null, h));
  table.append(head);
  for (const a of attempts) {
    const tr = el('tr');
    const took = a.startedAt && a.endedAt ? duration(Date.parse(a.endedAt) - Date.parse(a.startedAt)) : '';
    tr.append(
      el('td', null, String(a.n ?? '')),
      el('td', 'o-' + (a.outcome || ''), a.outcome || ''),
      el('td', null, a.startedAt ? new Date(a.startedAt).toLocaleTimeString() : ''),
      el('td', null, took),
      el('td', null, typeof a.tokens === 'number' ? tokens(a.tokens) : ''),
      el('td', null, typeof a.costUsd === 'number' ? usd(a.costUsd) : ''),
      el('td', 'dim', line(a.diffStat || '')),
      el('td', null, line(a.reason || (a.verdict && !a.verdict.pass ? (a.verdict.reasons || []).join('; ') : ''))),
    );
    table.append(tr);
  }
  return table;
}

function conflictsTab(d) {
  const list = Array.isArray(d.conflictDetails) ? d.conflictDetails : Array.isArray(d.conflicts) ? d.conflicts : [];
  if (list.length === 0) return el('p', 'empty', 'no conflict predicted');
  const ul = el('ul', 'conflicts');
  for (const c of list) {
    const li = el('li', null, 'with ' + c.with + (c.files && c.files.length ? ': ' + c.files.join(', ') : ''));
    if (Array.isArray(c.hunks)) for (const h of c.hunks) li.append(pre(h.file + '\n' + h.hunk, 'hunk'));
    ul.append(li);
  }
  return ul;
}

/** The plan's text: the API gives {attempt, text}; a plain string is taken as it is. */
export function planText(d) {
  if (!d || !d.plan) return '';
  return typeof d.plan === 'string' ? d.plan : d.plan.text || '';
}

function planTab(d) {
  const text = planText(d);
  const box = el('div', 'markdown');
  if (d.approvedPlan) {
    box.append(el('h3', null, 'the approved plan'), renderMarkdown(d.approvedPlan));
    if (text) box.append(el('h3', null, 'the explorer\u2019s plan'));
  }
  if (!text && !d.approvedPlan) return el('p', 'empty', 'no plan yet');
  if (text) {
    if (d.plan && d.plan.attempt) box.append(el('p', 'dim', 'attempt ' + d.plan.attempt));
    box.append(renderMarkdown(text));
  }
  return box;
}

export class DetailPane {
  /** root: the pane; output: the OutputLog; actions(row) builds the action bar (or null in read-only) */
  constructor(root, output, actions) {
    this.root = root;
    this.output = output;
    this.actions = actions;
    this.id = null;
    this.tab = 'plan';
    this.data = null;
    this.loading = false;
    this.again = false;
    this.unlisten = null;
    this.seeded = new Set();
    this.head = el('div', 'detail-head');
    this.about = el('div', 'detail-about');
    this.barSlot = el('div', 'detail-actions');
    this.barKey = null;
    this.head.append(this.about, this.barSlot);
    this.tabBar = el('nav', 'tabs');
    this.tabBar.setAttribute('role', 'tablist');
    this.body = el('div', 'detail-body');
    this.tabButtons = {};
    for (const t of TABS) {
      const b = el('button', 'tab', t);
      b.type = 'button';
      b.dataset.tab = t;
      b.setAttribute('role', 'tab');
      b.addEventListener('click', () => this.showTab(t));
      this.tabButtons[t] = b;
      this.tabBar.append(b);
    }
    fill(root, el('p', 'empty', 'select a task (j/k or a click)'));
  }

  /** Shows a task: its header at once from the row, the body once fetched. */
  show(id, row) {
    if (this.unlisten) this.unlisten();
    this.id = id;
    this.data = null;
    fill(this.root, this.head, this.tabBar, this.body);
    this.renderHead(row);
    this.unlisten = this.output.listen(id, (part, dropped) => this.onOutput(part, dropped));
    this.refresh();
    this.showTab(this.tab);
  }

  renderHead(row) {
    if (!row) return;
    const title = el('h2', 'detail-title');
    title.append(el('span', 'detail-id', row.id), document.createTextNode(' ' + line(row.title)));
    const facts = el('div', 'facts');
    facts.append(
      el('span', 'c-status s-' + row.status, (STATUS_SYMBOL[row.status] || '') + ' ' + row.status + (row.phase ? ' / ' + row.phase : '')),
      el('span', null, 'attempt ' + row.attempt + '/' + row.maxAttempts),
      el('span', null, tokens(row.tokens || 0) + ' tokens'),
      el('span', null, usd(row.costUsd || 0)),
    );
    if (row.branch) facts.append(el('code', 'branch', row.branch));
    if (row.pr && row.pr.url) facts.append(link(row.pr.url, 'PR #' + row.pr.number + ' ' + row.pr.state));
    fill(this.about, title, facts, row.reason ? el('p', 'reason', line(row.reason)) : null);
    // The action buttons are built again only when the task or its status changed, so a click on one is
    // never lost to a redraw of the same task.
    const key = row.id + ' ' + row.status;
    if (key !== this.barKey) {
      this.barKey = key;
      fill(this.barSlot, this.actions(row));
    }
  }

  /** The selected task's record changed: new header now, new body from the server. */
  changed(row) {
    this.renderHead(row);
    this.refresh();
  }

  async refresh() {
    if (this.id === null) return;
    if (this.loading) {
      this.again = true;
      return;
    }
    this.loading = true;
    const id = this.id;
    try {
      const d = await get(taskPath(id));
      if (id === this.id) {
        const fresh = !this.seeded.has(id) && d.output;
        if (fresh) {
          this.seeded.add(id);
          this.output.seed(id, d.output);
        }
        this.data = d;
        this.root.dataset.loaded = id;
        if (this.tab !== 'output' || fresh) this.showTab(this.tab);
      }
    } catch (e) {
      if (id === this.id) fill(this.body, el('p', 'error', 'could not read ' + id + ': ' + e.message));
    } finally {
      this.loading = false;
      if (this.again) {
        this.again = false;
        this.refresh();
      }
    }
  }

  showTab(tab) {
    // The same tab drawn again (its task changed) keeps where the person had scrolled to.
    const keep = this.body.dataset.tab === tab ? this.body.scrollTop : 0;
    this.tab = tab;
    for (const t of TABS) this.tabButtons[t].setAttribute('aria-selected', t === tab ? 'true' : 'false');
    this.body.dataset.tab = tab;
    if (tab === 'output') {
      const box = el('pre', 'live-output');
      for (const p of this.output.parts(this.id)) box.append(el('span', 'o-' + p.kind, p.text));
      this.outputBox = box;
      fill(this.body, box);
      box.scrollTop = box.scrollHeight;
      return;
    }
    this.outputBox = null;
    const d = this.data;
    if (d === null) {
      fill(this.body, el('p', 'empty', 'loading\u2026'));
      return;
    }
    const view = { plan: planTab, diff: (x) => renderDiff(x.diff || ''), checks: checksTab, review: reviewTab, history: historyTab, conflicts: conflictsTab }[tab];
    fill(this.body, view(d));
    this.body.scrollTop = keep;
  }

  onOutput(part, dropped) {
    const box = this.outputBox;
    if (!box) return;
    for (let i = 0; i < dropped && box.firstChild; i++) box.firstChild.remove();
    const stick = box.scrollTop + box.clientHeight >= box.scrollHeight - 4;
    box.append(el('span', 'o-' + part.kind, part.text));
    if (stick) box.scrollTop = box.scrollHeight;
  }

  nextTab(step) {
    const i = TABS.indexOf(this.tab);
    this.showTab(TABS[(i + step + TABS.length) % TABS.length]);
  }
}
`;
