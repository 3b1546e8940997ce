/**
 * The page's model of the fleet: tasks by id in backlog order, the counts per
 * status and the fleet's summary. A row comes either from `GET /api/tasks` (the shape of `status --json`)
 * or from an SSE `task` event (a task's record); {@link MODEL_JS}'s `normalise` reads both into one row.
 * `apply` changes one task and reports whether it knew it, so the list repaints that row alone; a record
 * older than the row it has (`updatedAt`) changes nothing.
 */
export const MODEL_JS = String.raw`
function totalTokens(u) {
  if (!u || typeof u !== 'object') return 0;
  return (u.input || 0) + (u.output || 0) + (u.cacheWrite || 0) + (u.cacheRead || 0);
}

/** One row of the list from a status row or a task record; fields a source lacks stay as they were. */
export function normalise(src, previous, now) {
  const t = src || {};
  const row = Object.assign({}, previous || {});
  for (const k of ['id', 'title', 'status', 'phase', 'attempt', 'maxAttempts', 'costUsd', 'branch', 'reason', 'updatedAt']) {
    if (t[k] !== undefined) row[k] = t[k];
  }
  if (typeof t.tokens === 'number') row.tokens = t.tokens;
  else if (t.usage) row.tokens = totalTokens(t.usage);
  if (t.budget && typeof t.budget === 'object') {
    row.budgetTokens = (row.tokens || 0) - totalTokens(t.budget.usage);
    row.budgetCost = (row.costUsd || 0) - (t.budget.costUsd || 0);
  }
  for (const k of ['counts', 'pr', 'conflictsWith', 'conflicts', 'waitingFor', 'gates', 'worker', 'workerFlag', 'checks', 'baseline', 'proof']) {
    if (t[k] !== undefined) row[k] = t[k];
  }
  if (t.waitingFor && typeof t.waitingFor === 'object') row.waitingFor = t.waitingFor.id;
  if (typeof t.elapsedMs === 'number') {
    row.elapsedMs = t.elapsedMs;
    row.receivedAt = now;
  }
  if (Array.isArray(t.attempts) && t.attempts.length > 0) {
    const last = t.attempts[t.attempts.length - 1];
    const checks = last.checks || (last.check ? [last.check] : []);
    const counted = checks.map((c) => c.counts).filter((c) => c);
    if (counted.length > 0) {
      row.counts = counted.reduce((a, c) => ({ passed: a.passed + c.passed, failed: a.failed + c.failed, skipped: a.skipped + c.skipped, total: a.total + c.total }), { passed: 0, failed: 0, skipped: 0, total: 0 });
    }
  }
  if (row.tokens === undefined) row.tokens = 0;
  if (row.costUsd === undefined) row.costUsd = 0;
  return row;
}

/** The live elapsed time of a row: a running task's clock goes on from when its record arrived. */
export function elapsedOf(row, now) {
  if (typeof row.elapsedMs !== 'number') return null;
  if (row.status !== 'running') return row.elapsedMs;
  return row.elapsedMs + Math.max(0, now - (row.receivedAt || now));
}

export class FleetModel {
  constructor() {
    this.order = [];
    this.byId = new Map();
    this.counts = {};
    this.summary = null;
  }

  /** The whole list, from GET /api/tasks. */
  reset(rows, now) {
    const next = new Map();
    for (const r of rows) next.set(r.id, normalise(r, this.byId.get(r.id), now));
    this.byId = next;
    this.order = rows.map((r) => r.id);
    this.recount();
  }

  recount() {
    const counts = {};
    for (const id of this.order) {
      const s = this.byId.get(id).status;
      counts[s] = (counts[s] || 0) + 1;
    }
    this.counts = counts;
  }

  /** One task's record changed. Returns whether the task was known (else the list must be fetched again). */
  apply(task, now) {
    const old = this.byId.get(task.id);
    if (old === undefined) return false;
    // A record older than the row (ISO times compare as strings) changes nothing.
    if (typeof task.updatedAt === 'string' && typeof old.updatedAt === 'string' && task.updatedAt < old.updatedAt) return true;
    const row = normalise(task, old, now);
    this.byId.set(task.id, row);
    if (old.status !== row.status) {
      this.counts[old.status] = (this.counts[old.status] || 1) - 1;
      this.counts[row.status] = (this.counts[row.status] || 0) + 1;
    }
    return true;
  }

  get(id) {
    return this.byId.get(id);
  }

  indexOf(id) {
    return this.order.indexOf(id);
  }
}
`;
