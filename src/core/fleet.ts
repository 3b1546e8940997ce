import { join } from 'node:path';
import PQueue from 'p-queue';
import type { Clock } from '../ports/clock.js';
import type { StateStore } from '../ports/state-store.js';
import type { Workspace } from '../ports/workspace.js';
import { StopError, UsageError } from '../domain/errors.js';
import { FleetEmitter, type FleetHandle, type FleetSnapshotSummary } from './events.js';
import { checkFleetGates } from './gates.js';
import { Pipeline, type PipelineServices } from './pipeline.js';
import { PortPool } from './port-pool.js';
import { WORK_DIR, taskBranch } from '../domain/layout.js';
import { FleetState } from './state.js';
import { runTask, taskGates, type TaskRunContext } from './task-runner.js';
import { mergeTask, discardTask, retryConflict, retryFailed } from './fleet-actions.js';
import { Accounting } from './accounting.js';
import { pruneWorktrees, type PruneResult } from './prune.js';
import {
  TASK_STATUSES,
  type Backlog,
  type FleetConfig,
  type GateName,
  type Role,
  type TaskSpec,
  type TaskState,
  type TaskStatus,
  type Usage,
} from '../domain/types.js';


export interface FleetServices extends PipelineServices {
  store: StateStore;
  clock: Clock;
  workspace: Workspace;
  /** ticks `[x]` on the task's item in BACKLOG.md; false when the item is gone */
  tickDone: (id: string) => Promise<boolean>;
  /** runs the `notify:` command with the event on stdin; resolves when it has ended (it never rejects) */
  notify: (command: string, payload: Record<string, unknown>) => Promise<void>;
}

export interface FleetOptions {
  repoRoot: string;
  backlog: Backlog;
  base: string;
  /** merge each verified task in backlog order as it is verified */
  autoMerge: boolean;
  parentEnv: NodeJS.ProcessEnv;
}


/**
 * The fleet: schedules tasks over a p-queue, runs each through the pipeline, keeps state and tells
 * subscribers. The TUI and the headless printer only listen to `events` and call the commands.
 */
export class Fleet implements FleetHandle {
  readonly events = new FleetEmitter();
  readonly repoRoot: string;
  readonly base: string;
  readonly backlogPath: string;
  readonly sandboxed: boolean;
  #config: FleetConfig;
  #specs = new Map<string, TaskSpec>();
  #order: string[] = [];
  readonly #s: FleetServices;
  readonly #opts: FleetOptions;
  readonly #pipeline: Pipeline;
  readonly #ports: PortPool;
  readonly #queue: PQueue;
  readonly #stop = new AbortController();
  #state!: FleetState;
  #scheduled = new Set<string>();
  #runStartedAt = 0;
  #accounting!: Accounting;
  #stoppedBy: GateName | null = null;
  #phase: FleetSnapshotSummary['state'] = 'idle';
  /** set by start(): a fleet opened only to merge or discard never starts tasks */
  #started = false;
  #ranThisRun = new Set<string>();
  #idleWaiters: Array<() => void> = [];
  #fleetTimer: NodeJS.Timeout | null = null;
  #merging: Promise<void> = Promise.resolve();
  /**
   * notify commands run one after another, so the receiver sees changes in the order they happened;
   * stop() waits for the chain so the last change is not lost at exit
   */
  #notifying: Promise<void> = Promise.resolve();

  constructor(services: FleetServices, options: FleetOptions) {
    this.#s = services;
    this.#opts = options;
    this.repoRoot = options.repoRoot;
    this.base = options.base;
    this.backlogPath = options.backlog.path;
    this.sandboxed = services.sandboxed;
    this.#config = options.backlog.config;
    this.#pipeline = new Pipeline(services);
    this.#ports = new PortPool(this.#config.ports);
    this.#queue = new PQueue({ concurrency: this.#config.concurrency, autoStart: false });
    this.#setSpecs(options.backlog.tasks);
  }

  get config(): FleetConfig {
    return this.#config;
  }

  /** Load state and reconcile it with the backlog and the worktrees a crash may have left. */
  async open(state?: FleetState): Promise<void> {
    // The caller may have opened the state already (to know which ids are taken): it is not read twice.
    this.#state = state ?? (await FleetState.open(this.#s.store, this.#s.clock));
    this.#accounting = new Accounting(this.#state);
    this.#state.base = this.base;
    this.#state.requeueInterrupted();
    for (const spec of this.#specs.values()) this.#ensure(spec);
    await this.#state.flush();
  }

  /** Remove worktrees a crash or a manual deletion left behind (see pruneWorktrees for what is never removed). */
  prune(): Promise<PruneResult> {
    return pruneWorktrees(this.#s.git, this.#s.workspace, this.#state, join(this.repoRoot, WORK_DIR), this.base);
  }

  worktreeOf(id: string): string {
    return join(this.repoRoot, WORK_DIR, id);
  }

  branchOf(id: string): string {
    return taskBranch(id);
  }

  tasks(): TaskState[] {
    const seen = new Set(this.#order);
    const rest = this.#state.all().filter((t) => !seen.has(t.id) && t.status !== 'queued');
    return [...this.#order.map((id) => this.#state.get(id)!).filter((t) => t !== undefined), ...rest];
  }

  task(id: string): TaskState | undefined {
    return this.#state.get(id);
  }

  summary(): FleetSnapshotSummary {
    const counts = Object.fromEntries(TASK_STATUSES.map((s) => [s, 0])) as Record<TaskStatus, number>;
    for (const t of this.tasks()) counts[t.status]++;
    return {
      state: this.#phase,
      counts,
      totals: {
        usage: this.#state.fleet.usage,
        costUsd: this.#state.fleet.costUsd,
        elapsedMs: this.#runStartedAt === 0 ? 0 : this.#s.clock.now() - this.#runStartedAt,
        startedAt: this.#state.fleet.startedAt,
      },
      stoppedBy: this.#stoppedBy,
    };
  }

  get stoppedBy(): GateName | null {
    return this.#stoppedBy;
  }

  /** Tasks that started an attempt or were merged during this run. */
  get ranThisRun(): ReadonlySet<string> {
    return this.#ranThisRun;
  }

  async diff(id: string): Promise<string> {
    const task = this.#state.get(id);
    if (task?.branch == null || !(await this.#s.workspace.exists(this.worktreeOf(id)))) return '';
    return this.#s.git.diff(this.worktreeOf(id), this.base);
  }

  /** Start running: schedule what is runnable. */
  start(): void {
    this.#runStartedAt = this.#s.clock.now();
    this.#state.updateFleet((f) => (f.startedAt ??= new Date(this.#runStartedAt).toISOString()));
    const limit = this.#config.fleetGates.timeMs;
    if (limit !== null) {
      this.#fleetTimer = setTimeout(() => this.#checkFleetNow(), limit);
      this.#fleetTimer.unref();
    }
    this.#started = true;
    this.#setPhase('running');
    this.#queue.start();
    this.#schedule();
  }

  /** Resolves when nothing is running and nothing more can start. */
  whenIdle(): Promise<void> {
    if (this.#isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  pause(): void {
    this.#queue.pause();
    this.#setPhase('paused');
  }

  resume(): void {
    if (this.#stop.signal.aborted) return;
    this.#queue.start();
    this.#setPhase('running');
    this.#schedule();
  }

  async stop(reason: Error = new StopError('the fleet was stopped')): Promise<void> {
    if (!this.#stop.signal.aborted) {
      this.#queue.pause();
      this.#queue.clear();
      this.#setPhase('stopping');
      this.#stop.abort(reason);
    }
    await this.#queue.onIdle();
    if (this.#fleetTimer !== null) clearTimeout(this.#fleetTimer);
    await this.#merging;
    await this.#notifying;
    await this.#state.flush();
    await this.#s.workspace.flush();
    this.#setPhase('finished');
  }

  /**
   * Replace the backlog (BACKLOG.md changed): queue new tasks, drop removed queued ones, never kill a running
   * one. Settings apply from now on (the caller has applied the command line's overrides); `ports:` keeps
   * the range the fleet started with, since running tasks hold ports from it.
   */
  applyBacklog(backlog: Backlog): void {
    const before = new Set(this.#specs.keys());
    this.#config = { ...backlog.config, ports: this.#config.ports };
    this.#queue.concurrency = this.#config.concurrency;
    this.#setSpecs(backlog.tasks);
    const added = [...this.#specs.keys()].filter((id) => !before.has(id));
    const removed = [...before].filter((id) => !this.#specs.has(id));
    for (const spec of this.#specs.values()) this.#ensure(spec);
    for (const id of removed) {
      if (this.#state.get(id)?.status === 'queued') this.#scheduled.delete(id);
    }
    if (added.length > 0 || removed.length > 0) this.events.emit('backlog', { added, removed });
    this.#emitFleet();
    this.#schedule();
  }

  async merge(id: string): Promise<void> {
    const run = this.#merging.then(() => mergeTask(this.#actions(), id));
    this.#merging = run.catch(() => undefined);
    await run;
    this.#schedule();
  }

  async discard(id: string): Promise<void> {
    await discardTask(this.#actions(), id);
    this.#schedule();
  }

  async retry(id: string): Promise<void> {
    const task = this.#state.get(id);
    if (task === undefined) throw new UsageError(`no task ${id}`);
    if (task.status === 'conflict') {
      await retryConflict(this.#actions(), id);
      return;
    }
    retryFailed(this.#actions(), id);
    this.#schedule();
  }

  #actions() {
    return {
      git: this.#s.git,
      state: this.#state,
      base: this.base,
      specs: this.#specs,
      worktreeOf: (id: string) => this.worktreeOf(id),
      branchOf: (id: string) => this.branchOf(id),
      tickDone: this.#s.tickDone,
      setStatus: (id: string, status: TaskStatus, change?: (t: TaskState) => void) => this.#setStatus(id, status, change),
      markRan: (id: string) => this.#ranThisRun.add(id),
      reverify: () => this.#schedule(),
      log: (message: string, id?: string) => this.events.emit('log', { level: 'info', message, ...(id === undefined ? {} : { id }) }),
    };
  }

  #setSpecs(tasks: TaskSpec[]): void {
    this.#specs = new Map(tasks.map((t) => [t.id, t]));
    this.#order = tasks.map((t) => t.id);
  }

  #ensure(spec: TaskSpec): void {
    if (this.#state === undefined) return;
    const existed = this.#state.get(spec.id) !== undefined;
    const gates = taskGates(spec, this.#config);
    const task = this.#state.ensure(spec, gates.attempts, gates);
    if (spec.done && task.status !== 'merged' && task.status !== 'running') {
      this.#state.update(spec.id, (t) => {
        t.status = 'merged';
        t.phase = null;
      });
    }
    if (!existed) this.events.emit('task', { task: structuredClone(task), previousStatus: null });
  }

  #setStatus(id: string, status: TaskStatus, change?: (t: TaskState) => void): void {
    const before = this.#state.get(id)?.status ?? null;
    const task = this.#state.update(
      id,
      (t) => {
        t.status = status;
        change?.(t);
      },
      before !== status,
    );
    if (before !== status && status === 'running') this.#ranThisRun.add(id);
    this.events.emit('task', { task: structuredClone(task), previousStatus: before });
    if (before !== status) {
      this.#emitFleet();
      this.#notify({ event: 'status', id, title: task.title, status, previousStatus: before, reason: task.reason, branch: task.branch });
    }
  }

  /** The `notify:` command gets each status change, and the fleet going idle, as JSON on stdin. */
  #notify(payload: Record<string, unknown>): void {
    if (this.#config.notify === null) return;
    const command = this.#config.notify;
    this.#notifying = this.#notifying.then(() => this.#s.notify(command, payload));
  }

  /** Enqueue every queued task whose `after:` tasks are merged, in backlog order (priority). */
  #schedule(): void {
    if (!this.#started || this.#phase === 'stopping' || this.#phase === 'finished') {
      this.#resolveIdle();
      return;
    }
    this.#order.forEach((id, index) => {
      const task = this.#state.get(id);
      const spec = this.#specs.get(id);
      if (task === undefined || spec === undefined || task.status !== 'queued' || this.#scheduled.has(id)) return;
      if (!spec.after.every((dep) => this.#state.get(dep)?.status === 'merged')) return;
      if (this.#phase === 'idle') this.#setPhase('running');
      this.#enqueue(id, -index);
    });
    this.#resolveIdle();
  }

  #enqueue(id: string, priority = 0): void {
    this.#scheduled.add(id);
    void this.#queue
      .add(async () => {
        const spec = this.#specs.get(id);
        const task = this.#state.get(id);
        // The backlog may have dropped it, or a person discarded it, while it waited.
        if (spec === undefined || task === undefined || (task.status !== 'queued' && task.status !== 'conflict')) return;
        if (this.#stop.signal.aborted) return;
        await runTask(this.#context(), spec, this.#config);
        if (this.#opts.autoMerge && this.#state.get(id)?.status === 'verified') {
          await this.merge(id).catch((error: Error) => this.events.emit('log', { level: 'warn', id, message: `auto-merge: ${error.message}` }));
        }
      }, { priority })
      .catch((error: unknown) => {
        // stop() clears the queue: the tasks that were waiting stay queued for the next run.
        if (this.#stop.signal.aborted && error instanceof Error && error.name === 'AbortError') return;
        this.events.emit('log', { level: 'error', id, message: `internal error running ${id}: ${error instanceof Error ? error.stack ?? error.message : String(error)}` });
        this.#setStatus(id, 'failed', (t) => (t.reason = `internal error: ${error instanceof Error ? error.message : String(error)}`));
      })
      .finally(() => {
        this.#scheduled.delete(id);
        this.#schedule();
      });
  }

  #context(): TaskRunContext {
    return {
      state: this.#state,
      events: this.events,
      pipeline: this.#pipeline,
      clock: this.#s.clock,
      ports: this.#ports,
      repoRoot: this.repoRoot,
      base: this.base,
      worktreeOf: (id) => this.worktreeOf(id),
      branchOf: (id) => this.branchOf(id),
      parentEnv: this.#opts.parentEnv,
      fleetSignal: this.#stop.signal,
      checkFleet: () => {
        if (this.#stop.signal.aborted) throw this.#stop.signal.reason;
        this.#checkFleetNow();
        if (this.#stop.signal.aborted) throw this.#stop.signal.reason;
      },
      account: (id, role, model, event) => this.#account(id, role, event.model || model, event.usage, event.costUsd),
      setStatus: (id, status, change) => this.#setStatus(id, status, change),
      transcript: (id, attempt, record) => this.#s.workspace.transcript(id, attempt, { t: new Date(this.#s.clock.now()).toISOString(), ...record }),
    };
  }

  #account(id: string, role: Role, model: string, delta: Usage, reportedUsd?: number): void {
    const task = this.#accounting.book(id, role, model, delta, this.#config.prices, reportedUsd);
    this.events.emit('usage', { id, role, model, delta, task: task.usage, taskCostUsd: task.costUsd, fleet: this.summary().totals });
  }

  /** Fleet gates count this run's spending: a new night starts with a fresh budget. */
  #checkFleetNow(): void {
    if (this.#stop.signal.aborted) return;
    const tripped = checkFleetGates(
      { usage: this.#accounting.runUsage, costUsd: this.#accounting.runCostUsd, elapsedMs: 0, startedAt: null },
      this.#config.fleetGates,
      this.#s.clock.now() - this.#runStartedAt,
    );
    if (tripped === null) return;
    this.#stoppedBy = tripped.gate;
    this.events.emit('gate', { scope: 'fleet', id: null, gate: tripped.gate, reason: tripped.message });
    void this.stop(tripped);
  }

  #isIdle(): boolean {
    return this.#queue.size === 0 && this.#queue.pending === 0 && this.#scheduled.size === 0;
  }

  /** Nothing running and nothing startable: the fleet is idle (it still picks up new work) until more comes. */
  #resolveIdle(): void {
    if (!this.#isIdle()) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const resolve of waiters) resolve();
    if (this.#phase === 'running') this.#setPhase('idle');
  }

  #setPhase(phase: FleetSnapshotSummary['state']): void {
    this.#phase = phase;
    this.#emitFleet();
    if (phase === 'idle') this.#notify({ event: 'idle', counts: this.summary().counts });
  }

  #emitFleet(): void {
    if (this.#state === undefined) return;
    this.events.emit('fleet', this.summary());
  }
}

