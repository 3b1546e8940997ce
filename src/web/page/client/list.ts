/**
 * The task list, windowed: only the rows in view (and a few either side)
 * exist in the document, each a pooled element re-filled in place, so 2,000 tasks cost what 40 do. A task
 * event repaints its own row, and only the cells whose text changed (`setText`); nothing re-renders the
 * list as a whole except a scroll, a resize or a new backlog.
 */
export const LIST_JS = String.raw`
import { el, line, link, setText } from './dom.js';
import { duration, meter, ratioClass, STATUS_SYMBOL, tokens, usd } from './format.js';
import { elapsedOf } from './model.js';

export const ROW_HEIGHT = 28;
const OVERSCAN = 8;
const CELLS = ['id', 'status', 'title', 'attempt', 'tests', 'tokens', 'cost', 'elapsed', 'pr'];

function testsText(counts) {
  if (!counts || typeof counts.total !== 'number') return '';
  if (counts.failed > 0) return counts.failed + '/' + counts.total + ' failing';
  return counts.passed + '/' + counts.total + ' passing';
}

/** The note after a title: a predicted conflict, why it stopped, or what it waits for. */
function noteOf(row) {
  if (row.status === 'verified' && Array.isArray(row.conflictsWith) && row.conflictsWith.length > 0) {
    return { text: '\u26a0 conflicts with ' + row.conflictsWith.join(', '), cls: 'note warn' };
  }
  if (row.status === 'queued' && row.waitingFor) return { text: 'waits for ' + row.waitingFor, cls: 'note' };
  if ((row.status === 'failed' || row.status === 'conflict') && row.reason) return { text: '\u2014 ' + row.reason, cls: 'note bad' };
  if (row.status === 'running' && row.worker) return { text: '@' + row.worker, cls: 'note' };
  return { text: '', cls: 'note' };
}

/** The text of each cell of a row, and the classes that colour it. */
export function cellsOf(row, gates, now) {
  const spent = row.tokens > 0 || row.costUsd > 0;
  const limits = row.gates || gates || {};
  const tokRatio = limits.tokens ? (row.budgetTokens ?? row.tokens) / limits.tokens : null;
  const costRatio = limits.costUsd ? (row.budgetCost ?? row.costUsd) / limits.costUsd : null;
  const elapsed = elapsedOf(row, now);
  const note = noteOf(row);
  return {
    id: row.id,
    status: (STATUS_SYMBOL[row.status] || '') + ' ' + row.status + (row.phase ? ' \u00b7 ' + row.phase : ''),
    title: line(row.title),
    note: line(note.text),
    noteClass: note.cls,
    phase: row.phase || '',
    attempt: (row.attempt > 0 ? row.attempt : '\u2013') + '/' + (row.maxAttempts ?? '?'),
    tests: testsText(row.counts),
    testsFailing: !!(row.counts && row.counts.failed > 0),
    tokens: spent ? tokens(row.tokens) : '',
    tokensLimit: limits.tokens ? 'of ' + tokens(limits.tokens) + ' (the gate)' : '',
    tokensMeter: spent && tokRatio !== null ? meter(tokRatio) : '',
    tokensClass: tokRatio === null ? '' : ratioClass(tokRatio),
    cost: spent ? usd(row.costUsd) : '',
    costLimit: limits.costUsd ? 'of ' + usd(limits.costUsd) + ' (the gate)' : '',
    costMeter: spent && costRatio !== null ? meter(costRatio) : '',
    costClass: costRatio === null ? '' : ratioClass(costRatio),
    elapsed: elapsed === null || (elapsed === 0 && row.status !== 'running') ? '' : duration(elapsed),
    pr: row.pr && row.pr.url ? row.pr : null,
  };
}

function rowElement() {
  const r = el('div', 'row');
  r.setAttribute('role', 'row');
  const parts = {};
  for (const name of CELLS) {
    const c = el('span', 'cell c-' + name);
    c.setAttribute('role', 'gridcell');
    parts[name] = c;
    r.append(c);
  }
  parts.titleText = el('span', 'title-text');
  parts.note = el('span', 'note');
  parts.title.append(parts.titleText, parts.note);
  parts.tokensText = el('span', 'num');
  parts.tokensMeter = el('span', 'meter');
  parts.tokens.append(parts.tokensText, parts.tokensMeter);
  parts.costText = el('span', 'num');
  parts.costMeter = el('span', 'meter');
  parts.cost.append(parts.costText, parts.costMeter);
  r._parts = parts;
  r._pr = undefined;
  return r;
}

function setClass(node, cls) {
  if (node.className !== cls) node.className = cls;
}

/** Fills a pooled row element with a row's cells, touching only what changed. */
function paint(r, row, selected, gates, now) {
  const p = r._parts;
  const c = cellsOf(row, gates, now);
  if (r.dataset.id !== row.id) r.dataset.id = row.id;
  if (r.dataset.status !== row.status) r.dataset.status = row.status;
  setClass(r, selected ? 'row selected' : 'row');
  r.setAttribute('aria-selected', selected ? 'true' : 'false');
  setText(p.id, c.id);
  setText(p.status, c.status);
  setClass(p.status, 'cell c-status s-' + row.status);
  setText(p.titleText, c.title);
  setText(p.note, c.note ? '  ' + c.note : '');
  setClass(p.note, c.noteClass);
  setText(p.attempt, c.attempt);
  setText(p.tests, c.tests);
  setClass(p.tests, c.testsFailing ? 'cell c-tests bad' : 'cell c-tests');
  setText(p.tokensText, c.tokens);
  setText(p.tokensMeter, c.tokensMeter);
  if (p.tokens.title !== c.tokensLimit) p.tokens.title = c.tokensLimit;
  setClass(p.tokensMeter, 'meter ' + c.tokensClass);
  setText(p.costText, c.cost);
  setText(p.costMeter, c.costMeter);
  if (p.cost.title !== c.costLimit) p.cost.title = c.costLimit;
  setClass(p.costMeter, 'meter ' + c.costClass);
  setText(p.elapsed, c.elapsed);
  const prKey = c.pr ? c.pr.url + ' ' + c.pr.state + ' ' + c.pr.number : '';
  if (r._pr !== prKey) {
    r._pr = prKey;
    p.pr.replaceChildren();
    if (c.pr) p.pr.append(link(c.pr.url, '#' + c.pr.number + ' ' + c.pr.state));
  }
}

export class TaskList {
  /** viewport: the scrolling element; onSelect(id) when a row is clicked */
  constructor(viewport, model, onSelect) {
    this.viewport = viewport;
    this.model = model;
    this.gates = null;
    this.selected = null;
    this.spacer = el('div', 'spacer');
    this.layer = el('div', 'rows');
    this.layer.setAttribute('role', 'rowgroup');
    viewport.append(this.spacer, this.layer);
    this.pool = [];
    this.shown = new Map();
    this.first = 0;
    viewport.addEventListener('scroll', () => this.render());
    new ResizeObserver(() => this.render()).observe(viewport);
    this.layer.addEventListener('click', (e) => {
      const r = e.target.closest('.row');
      if (r && !e.target.closest('a')) onSelect(r.dataset.id);
    });
  }

  /** Lays out the rows in view: called on scroll, resize, a new list or a new selection. */
  render() {
    const ids = this.model.order;
    this.spacer.style.height = ids.length * ROW_HEIGHT + 'px';
    const height = this.viewport.clientHeight || 600;
    const first = Math.max(0, Math.floor(this.viewport.scrollTop / ROW_HEIGHT) - OVERSCAN);
    const last = Math.min(ids.length, Math.ceil((this.viewport.scrollTop + height) / ROW_HEIGHT) + OVERSCAN);
    while (this.pool.length < last - first) {
      const r = rowElement();
      this.pool.push(r);
      this.layer.append(r);
    }
    this.first = first;
    this.shown.clear();
    const now = Date.now();
    for (let i = 0; i < this.pool.length; i++) {
      const r = this.pool[i];
      const index = first + i;
      if (index >= last) {
        r.hidden = true;
        continue;
      }
      const id = ids[index];
      r.hidden = false;
      r.style.transform = 'translateY(' + index * ROW_HEIGHT + 'px)';
      paint(r, this.model.get(id), id === this.selected, this.gates, now);
      this.shown.set(id, r);
    }
  }

  /** One task changed: repaint its row if it is in view; nothing else moves. */
  update(id) {
    const r = this.shown.get(id);
    if (r !== undefined) paint(r, this.model.get(id), id === this.selected, this.gates, Date.now());
  }

  /** The running rows' clocks. */
  tick() {
    const now = Date.now();
    for (const [id, r] of this.shown) {
      const row = this.model.get(id);
      if (row && row.status === 'running') paint(r, row, id === this.selected, this.gates, now);
    }
  }

  select(id) {
    const before = this.selected;
    this.selected = id;
    if (before !== null && this.model.get(before)) this.update(before);
    if (id !== null) {
      this.scrollTo(id);
      this.update(id);
    }
  }

  scrollTo(id) {
    const index = this.model.indexOf(id);
    if (index < 0) return;
    const top = index * ROW_HEIGHT;
    const v = this.viewport;
    if (top < v.scrollTop) v.scrollTop = top;
    else if (top + ROW_HEIGHT > v.scrollTop + v.clientHeight) v.scrollTop = top + ROW_HEIGHT - v.clientHeight;
    this.render();
  }
}
`;
