import type { QueueResult } from '../../src/core/land/merge-queue.js';
import { newAttempt } from '../../src/core/task/attempt-record.js';
import { FleetEmitter, type FleetSnapshotSummary } from '../../src/core/task/events.js';
import type { FleetHandle, ReviewWait } from '../../src/core/fleet/handle.js';
import { RefusedError } from '../../src/domain/errors.js';
import { commandRefusal, type TaskCommand } from '../../src/domain/task-rules.js';
import {
  addUsage,
  TASK_STATUSES,
  ZERO_USAGE,
  type AttemptRecord,
  type FleetConfig,
  type FleetTotals,
  type Phase,
  type Role,
  type RunRecord,
  type TaskState,
  type TaskStatus,
  type Usage,
} from '../../src/domain/types.js';
import { taskBranch } from '../../src/domain/layout.js';

/**
 * A scripted stand-in for the engine: it holds task snapshots, answers the read side of `FleetHandle`,
 * performs commands as state changes, and emits exactly the events a test or a benchmark tells it to.
 * No timers, no I/O; usable outside tests.
 */

export type FakeCommand = 'merge' | 'mergeAll' | 'discard' | 'retry' | 'approve' | 'pause' | 'resume' | 'stop';

export interface FakeCall {
  readonly command: FakeCommand;
  readonly id?: string;
  /** the plan given to approve, when one was */
  readonly plan?: string;
}

export interface FakeFleetOptions {
  tasks?: TaskState[];
  repoRoot?: string;
  base?: string;
  backlogPath?: string;
  sandboxed?: boolean;
  config?: Partial<FleetConfig>;
  state?: FleetSnapshotSummary['state'];
  /** per-task diffs; a task without one diffs as '' */
  diffs?: Record<string, string>;
}

const EPOCH = '2026-01-01T00:00:00.000Z';

export function defaultConfig(overrides: Partial<FleetConfig> = {}): FleetConfig {
  return {
    base: 'main',
    concurrency: 3,
    check: 'npm test',
    setup: null,
    model: 'claude-sonnet-5-5',
    review: true,
    parallel: 1,
    autonomy: 'review',
    gates: { attempts: 3, tokens: 500_000, timeMs: 30 * 60_000, costUsd: 2 },
    fleetGates: { tokens: 5_000_000, costUsd: 25, timeMs: 8 * 3_600_000 },
    ports: { from: 4100, to: 4199 },
    notify: null,
    sandbox: 'auto',
    maxFiles: 50,
    maxLines: 2000,
    protect: [],
    maxFileBytes: 5_000_000,
    maxBytes: 10_000_000,
    tests: [],
    prices: {},
    checkTimeoutMs: 600_000,
    setupTimeoutMs: 600_000,
    env: [],
    discovered: 'hold',
    lessons: true,
    ...overrides,
  };
}

/** A task snapshot with plausible defaults; `overrides` wins. */
export function fakeTask(id: string, overrides: Partial<TaskState> = {}): TaskState {
  return {
    id,
    title: `Task ${id}`,
    status: 'queued',
    phase: null,
    attempt: 0,
    maxAttempts: 3,
    usage: { ...ZERO_USAGE },
    costUsd: 0,
    branch: taskBranch(id),
    reason: null,
    gate: null,
    attempts: [],
    elapsedMs: 0,
    startedAt: null,
    updatedAt: EPOCH,
    unpricedModels: [],
    verifyOnly: false,
    budget: { fromAttempt: 0, usage: { ...ZERO_USAGE }, costUsd: 0, elapsedMs: 0 },
    ...overrides,
  };
}

/** An attempt record with defaults; `overrides` wins. */
export function fakeAttempt(n: number, overrides: Partial<AttemptRecord> = {}): AttemptRecord {
  return { ...newAttempt(n, EPOCH), ...overrides };
}

/**
 * A finished run of a recurring task that started at `startedAt` (ISO) and took `minutes`; `overrides` wins.
 */
export function fakeRun(startedAt: string, minutes = 3, overrides: Partial<RunRecord> = {}): RunRecord {
  const endedAt = new Date(Date.parse(startedAt) + minutes * 60_000).toISOString();
  return { startedAt, endedAt, outcome: 'unchanged', costUsd: 0.05, tokens: 20_000, ...overrides };
}

/**
 * A recurring task waiting `queued` for its next run: `runs` finished runs, one every `everyMs` ending at
 * `lastEnd` (ISO), and the next due `everyMs` after the last (the engine counts it from the last run's end).
 */
export function fakeRecurringTask(
  id: string,
  lastEnd: string,
  runs: number,
  everyMs: number,
  overrides: Partial<TaskState> = {},
): TaskState {
  const outcomes: RunRecord['outcome'][] = ['unchanged', 'merged', 'unchanged', 'discarded'];
  const list = Array.from({ length: runs }, (_, i) => {
    const end = Date.parse(lastEnd) - (runs - 1 - i) * everyMs;
    const minutes = 2 + (i % 4);
    return fakeRun(new Date(end - minutes * 60_000).toISOString(), minutes, {
      outcome: outcomes[i % outcomes.length],
      costUsd: 0.1 * (1 + (i % 3)),
      tokens: 10_000 * (1 + (i % 5)),
    });
  });
  const nextRunAt = new Date(Date.parse(lastEnd) + everyMs).toISOString();
  return fakeTask(id, {
    title: `Recurring ${id}`,
    status: 'queued',
    everyMs,
    runs: list,
    nextRunAt,
    attempt: 1,
    reason: `nothing to change; next run at ${nextRunAt}`,
    ...overrides,
  });
}

const MIX: readonly TaskStatus[] = [
  'running',
  'queued',
  'queued',
  'verified',
  'failed',
  'merged',
  'queued',
  'conflict',
  'queued',
  'discarded',
];

/** `n` tasks `T-1`…`T-n` with a deterministic mix of statuses, as a benchmark backlog. */
export function fakeTasks(n: number): TaskState[] {
  return Array.from({ length: n }, (_, i) => {
    const status = MIX[i % MIX.length] ?? 'queued';
    const started = status !== 'queued';
    const tokens = started ? ((i * 7919) % 400) * 1000 : 0;
    return fakeTask(`T-${i + 1}`, {
      title: `Backlog item number ${i + 1}: ${['upgrade a dependency', 'migrate the tests', 'remove a feature flag', 'fix a flaky check'][i % 4]}`,
      status,
      phase: status === 'running' ? 'implement' : null,
      attempt: started ? 1 + (i % 3) : 0,
      usage: { input: tokens, output: Math.round(tokens / 10), cacheWrite: 0, cacheRead: 0 },
      costUsd: started ? tokens / 250_000 : 0,
      reason:
        status === 'failed'
          ? 'check failed twice with the same error'
          : status === 'conflict'
            ? 'merge conflict in src/index.ts'
            : null,
      elapsedMs: started ? (i % 50) * 30_000 : 0,
    });
  });
}

export class FakeFleet implements FleetHandle {
  readonly events = new FleetEmitter();
  readonly repoRoot: string;
  readonly base: string;
  readonly backlogPath: string;
  readonly sandboxed: boolean;
  readonly config: FleetConfig;
  /** every command called, in order */
  readonly calls: FakeCall[] = [];
  /** the next call of a command rejects with this message, once */
  readonly refusals = new Map<FakeCommand, string>();
  readonly diffs = new Map<string, string>();

  private readonly order: string[] = [];
  private readonly byId = new Map<string, TaskState>();
  private state: FleetSnapshotSummary['state'];
  private stoppedBy: FleetSnapshotSummary['stoppedBy'] = null;
  private totals: FleetTotals = { usage: { ...ZERO_USAGE }, costUsd: 0, elapsedMs: 0, startedAt: null };

  constructor(options: FakeFleetOptions = {}) {
    this.repoRoot = options.repoRoot ?? '/home/dev/my-repo';
    this.base = options.base ?? 'main';
    this.backlogPath = options.backlogPath ?? `${this.repoRoot}/BACKLOG.md`;
    this.sandboxed = options.sandboxed ?? true;
    this.config = defaultConfig({ base: this.base, ...options.config });
    this.state = options.state ?? 'running';
    for (const task of options.tasks ?? []) this.put(task);
    for (const [id, diff] of Object.entries(options.diffs ?? {})) this.diffs.set(id, diff);
  }

  // ── FleetView ──

  tasks(): TaskState[] {
    return this.order.flatMap((id) => {
      const t = this.byId.get(id);
      return t === undefined ? [] : [t];
    });
  }

  task(id: string): TaskState {
    const t = this.byId.get(id);
    if (t === undefined) throw new Error(`no task ${id}`);
    return t;
  }

  summary(): FleetSnapshotSummary {
    const counts = Object.fromEntries(TASK_STATUSES.map((s) => [s, 0])) as Record<TaskStatus, number>;
    for (const t of this.byId.values()) counts[t.status]++;
    return { state: this.state, counts, totals: this.totals, stoppedBy: this.stoppedBy };
  }

  /** set by a test to play `review_capacity:` being reached */
  reviewWaits = new Map<string, ReviewWait>();

  waitingForReview(id: string): ReviewWait | null {
    return this.reviewWaits.get(id) ?? null;
  }

  async diff(id: string): Promise<string> {
    return this.diffs.get(id) ?? '';
  }

  // ── FleetCommands ──

  async merge(id: string): Promise<void> {
    this.record('merge', id);
    this.requireStatus(id, 'merge');
    this.update(id, { status: 'merged', phase: null });
  }

  /** Merges every verified task in list order, as the engine's queue does when every check passes. */
  async mergeAll(): Promise<QueueResult> {
    this.record('mergeAll');
    const merged = this.tasks()
      .filter((t) => t.status === 'verified')
      .map((t) => t.id);
    for (const id of merged) this.update(id, { status: 'merged', phase: null });
    return { merged, sentBack: [], conflicts: [], refused: null, notReached: [] };
  }

  async discard(id: string): Promise<void> {
    this.record('discard', id);
    this.requireStatus(id, 'discard');
    this.update(id, { status: 'discarded', phase: null });
  }

  async retry(id: string): Promise<void> {
    this.record('retry', id);
    this.requireStatus(id, 'retry');
    this.update(id, { status: 'queued', phase: null, reason: null, gate: null });
  }

  approve(id: string, plan?: string): void {
    this.record('approve', id);
    if (plan !== undefined) (this.calls[this.calls.length - 1] as { plan?: string }).plan = plan;
    this.requireStatus(id, 'approve');
    const proposed = this.task(id).attempts.findLast((a) => a.plan !== null)?.plan ?? null;
    this.update(id, { status: 'queued', phase: null, reason: 'plan approved', approvedPlan: plan ?? proposed });
  }

  pause(): void {
    this.record('pause');
    this.setState('paused');
  }

  resume(): void {
    this.record('resume');
    this.setState('running');
  }

  async stop(): Promise<void> {
    this.record('stop');
    this.setState('stopping');
    this.setState('finished');
  }

  // ── scripting ──

  /** Change a task and emit its `task` event, with the status it had before. */
  update(id: string, patch: Partial<TaskState>): TaskState {
    const previous = this.byId.get(id) ?? null;
    const task: TaskState = { ...(previous ?? fakeTask(id)), ...patch, id, updatedAt: new Date().toISOString() };
    this.put(task);
    this.events.emit('task', { task, previousStatus: previous?.status ?? null });
    return task;
  }

  /** New tasks at the end of the backlog: a `backlog` event, then a `task` event for each. */
  add(...tasks: TaskState[]): void {
    for (const t of tasks) this.put(t);
    this.events.emit('backlog', { added: tasks.map((t) => t.id), removed: [] });
  }

  /** Tasks dropped from the backlog. */
  remove(...ids: string[]): void {
    for (const id of ids) {
      this.byId.delete(id);
      const i = this.order.indexOf(id);
      if (i !== -1) this.order.splice(i, 1);
    }
    this.events.emit('backlog', { added: [], removed: ids });
  }

  agentText(id: string, text: string, role: Role = 'implementer'): void {
    this.events.emit('agent-text', { id, role, attempt: this.attemptOf(id), text });
  }

  toolCall(id: string, name: string, input: string, role: Role = 'implementer'): void {
    this.events.emit('tool-call', { id, role, attempt: this.attemptOf(id), name, input });
  }

  phaseOutput(id: string, phase: Phase, chunk: string): void {
    this.events.emit('phase-output', { id, phase, chunk });
  }

  /** Usage reported for a task: updates the task's and the fleet's totals, emits `usage`. */
  usage(id: string, delta: Usage, costUsd: number, role: Role = 'implementer', model = 'claude-sonnet-5-5'): void {
    const task = this.byId.get(id);
    if (task === undefined) return;
    const next: TaskState = { ...task, usage: addUsage(task.usage, delta), costUsd: task.costUsd + costUsd };
    this.put(next);
    this.totals = { ...this.totals, usage: addUsage(this.totals.usage, delta), costUsd: this.totals.costUsd + costUsd };
    this.events.emit('usage', {
      id,
      role,
      model,
      delta,
      costUsd,
      task: next.usage,
      taskCostUsd: next.costUsd,
      fleet: this.totals,
    });
  }

  setState(state: FleetSnapshotSummary['state'], stoppedBy: FleetSnapshotSummary['stoppedBy'] = this.stoppedBy): void {
    this.state = state;
    this.stoppedBy = stoppedBy;
    this.events.emit('fleet', this.summary());
  }

  setTotals(totals: Partial<FleetTotals>): void {
    this.totals = { ...this.totals, ...totals };
    this.events.emit('fleet', this.summary());
  }

  log(level: 'info' | 'warn' | 'error', message: string, id?: string): void {
    this.events.emit('log', id === undefined ? { level, message } : { level, message, id });
  }

  private put(task: TaskState): void {
    if (!this.byId.has(task.id)) this.order.push(task.id);
    this.byId.set(task.id, task);
  }

  private attemptOf(id: string): number {
    return this.byId.get(id)?.attempt ?? 1;
  }

  private record(command: FakeCommand, id?: string): void {
    this.calls.push(id === undefined ? { command } : { command, id });
    const refusal = this.refusals.get(command);
    if (refusal !== undefined) {
      this.refusals.delete(command);
      throw new RefusedError(refusal);
    }
  }

  /** The engine's own command table (domain/task-rules), so the fake refuses exactly what the fleet refuses. */
  private requireStatus(id: string, command: TaskCommand): void {
    const task = this.byId.get(id);
    if (task === undefined) throw new RefusedError(`no task ${id}`);
    const refusal = commandRefusal(command, id, task.status);
    if (refusal !== null) throw new RefusedError(refusal);
  }
}
