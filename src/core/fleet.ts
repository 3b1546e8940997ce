import { join } from 'node:path';
import type { Clock } from '../ports/clock.js';
import type { StateStore } from '../ports/state-store.js';
import type { Workspace } from '../ports/workspace.js';
import { DiskFullError, ResourceLimitError, StopError } from '../domain/errors.js';
import { FleetEmitter, type FleetHandle, type FleetSnapshotSummary } from './events.js';
import { FleetBudget } from './gates.js';
import { BacklogView } from './backlog-view.js';
import { Pipeline, type PipelineServices } from './pipeline.js';
import { PortPool } from './port-pool.js';
import { WORK_DIR, taskBranch } from '../domain/layout.js';
import { FleetState } from './state.js';
import { TaskRunner } from './task-runner.js';
import { InProcessExecutor, type AttemptExecutor } from './executor/attempt-executor.js';
import { Landing } from './landing.js';
import type { QueueResult } from './merge-queue.js';
import { FleetActions } from './fleet-actions.js';
import { Merging } from './merging.js';
import { RateLimits } from './rate-limits.js';
import { RunPhase } from './run-phase.js';
import type { TaskChange } from './task-transitions.js';
import { autonomyOf } from '../domain/task-rules.js';
import { Accounting } from './accounting.js';
import { pruneWorktrees, type PruneResult } from './prune.js';
import { Notifier } from './notify-digest.js';
import { Scheduler } from './scheduler.js';
import { SetupTrust } from './setup-trust.js';
import { PullRequests, type SyncResult } from './forge/pull-requests.js';
import type { ForgeLink } from './forge/forge-link.js';
import type { Backlog, FleetConfig, GateName, Role, TaskSpec, TaskState, Usage } from '../domain/types.js';

export interface FleetServices extends PipelineServices {
  store: StateStore;
  clock: Clock;
  workspace: Workspace;
  /** ticks `[x]` on the task's item in BACKLOG.md; false when the item is gone */
  tickDone: (id: string) => Promise<boolean>;
  /** runs the `notify:` command with the event on stdin; resolves when it has ended (it never rejects) */
  notify: (command: string, payload: Record<string, unknown>) => Promise<void>;
  /** the forge pull requests go to (`land: pr`); null or absent: none configured */
  forge?: ForgeLink | null;
  /** why there is no forge, for the refusal of a pull request */
  forgeMissing?: string;
  /** where attempts run; absent: the fleet's own pipeline, in this process */
  executor?: AttemptExecutor;
}

export interface FleetOptions {
  repoRoot: string;
  backlog: Backlog;
  base: string;
  /** land each verified task through the merge queue as it is verified */
  autoMerge: boolean;
  parentEnv: NodeJS.ProcessEnv;
  /** --no-wait: a rate or usage limit fails the task and stops the run instead of holding the fleet */
  noWait?: boolean;
}

/**
 * The fleet: the one handle the commands, the TUI and the headless printer hold; they only listen to
 * `events` and call the commands. It wires the engine's parts and keeps none of their state: which queued
 * task starts when is the Scheduler's, the phase and a limit's hold RunPhase's, merges and forecasts
 * Merging's, what the backlog lists BacklogView's, one task's attempt the TaskRunner's. Invariants: a
 * stopped fleet never starts again; stop() returns only once every task, merge, forecast and notify
 * command it started has ended and the state is saved.
 */
export class Fleet implements FleetHandle {
  readonly events = new FleetEmitter();
  readonly repoRoot: string;
  readonly base: string;
  readonly backlogPath: string;
  readonly sandboxed: boolean;
  readonly #backlog: BacklogView;
  readonly #s: FleetServices;
  readonly #opts: FleetOptions;
  readonly #pipeline: Pipeline;
  readonly #setupTrust: SetupTrust;
  readonly #ports: PortPool;
  readonly #scheduler: Scheduler;
  readonly #stop = new AbortController();
  #state!: FleetState;
  #runner!: TaskRunner;
  #actions!: FleetActions;
  #merges!: Merging;
  #pulls!: PullRequests;
  #diskFull: DiskFullError | null = null;
  #limit: ResourceLimitError | null = null;
  #accounting!: Accounting;
  readonly #budget: FleetBudget;
  #stoppedBy: GateName | null = null;
  readonly #limits: RateLimits;
  readonly #phase: RunPhase;
  /** set by start(): a fleet opened only to merge or discard never starts tasks */
  #started = false;
  #ranThisRun = new Set<string>();
  readonly #notifier: Notifier;

  constructor(services: FleetServices, options: FleetOptions) {
    this.#s = services;
    this.#opts = options;
    this.repoRoot = options.repoRoot;
    this.base = options.base;
    this.backlogPath = options.backlog.path;
    this.sandboxed = services.sandboxed;
    this.#backlog = new BacklogView(options.backlog);
    this.#setupTrust = new SetupTrust(services.git);
    this.#pipeline = new Pipeline(services, this.#setupTrust);
    this.#notifier = new Notifier(() => this.#backlog.config, (command, payload) => services.notify(command, payload));
    this.#phase = new RunPhase({
      clock: services.clock,
      notifier: this.#notifier,
      emit: () => this.#emitFleet(),
      counts: () => this.summary().counts,
      due: () => this.resume(),
    });
    this.#ports = new PortPool(this.#backlog.config.ports);
    this.#scheduler = new Scheduler({
      clock: services.clock,
      events: this.events,
      stop: this.#stop.signal,
      state: () => this.#state,
      backlog: () => this.#backlog,
      open: () => this.#started && !this.#stop.signal.aborted && this.#phase.current !== 'stopping' && this.#phase.current !== 'finished' && !this.#backlog.missing,
      run: (spec) => this.#run(spec),
      busy: (busy) => {
        if (busy && this.#phase.current === 'idle') this.#phase.set('running');
        if (!busy && this.#phase.current === 'running') this.#phase.set('idle');
      },
    }, this.#backlog.config.concurrency);
    this.#budget = new FleetBudget(() => this.#backlog.config.fleetGates, () => services.clock.now(), (gate) => {
      if (this.#stop.signal.aborted) return;
      this.#stoppedBy = gate.gate;
      this.events.emit('gate', { scope: 'fleet', id: null, gate: gate.gate, reason: gate.message });
      void this.stop(gate);
    });
    this.#limits = new RateLimits({
      now: () => services.clock.now(),
      hold: (reason, until, backoff) => this.hold(reason, until, backoff),
      holding: () => this.#phase.holding,
      probe: (on) => (this.#scheduler.concurrency = on ? 1 : this.#backlog.config.concurrency),
      stop: (reason) => {
        this.events.emit('log', { level: 'warn', message: `stopping: ${reason}` });
        void this.stop(new StopError(reason));
      },
    }, options.noWait === true);
    this.events.on('gate', (gate) => this.#notifier.send({ event: 'gate', ...gate }));
  }

  get config(): FleetConfig {
    return this.#backlog.config;
  }

  /** Load state and reconcile it with the backlog and the worktrees a crash may have left. */
  async open(state?: FleetState): Promise<void> {
    // The caller may have opened the state already (to know which ids are taken): it is not read twice.
    this.#state = state ?? (await FleetState.open(this.#s.store, this.#s.clock));
    const lifecycle = this.#state.lifecycle;
    this.#state.onSaveError((error) => this.#saveFailed(error));
    lifecycle.listen((change) => this.#taskChanged(change));
    this.#accounting = new Accounting(this.#state);
    const paths = { worktreeOf: (id: string) => this.worktreeOf(id), branchOf: (id: string) => this.branchOf(id) };
    this.#actions = new FleetActions({
      git: this.#s.git,
      lifecycle,
      base: this.base,
      paths,
      tickDone: this.#s.tickDone,
      markRan: (id) => this.#ranThisRun.add(id),
      recurring: (id) => this.#backlog.specs.get(id)?.everyMs !== undefined,
      setupTrust: this.#setupTrust,
      log: (message, id) => this.events.emit('log', { level: 'info', message, ...(id === undefined ? {} : { id }) }),
    });
    // What the merge queue and the task runner both work with: the same worktrees, ports and pipeline.
    const shared = {
      lifecycle,
      pipeline: this.#pipeline,
      events: this.events,
      ports: this.#ports,
      paths,
      repoRoot: this.repoRoot,
      base: this.base,
      parentEnv: this.#opts.parentEnv,
    };
    const landing = new Landing({ ...shared, git: this.#s.git, actions: this.#actions });
    this.#merges = new Merging({ landing, actions: this.#actions, events: this.events, stop: this.#stop.signal });
    this.#pulls = new PullRequests({
      ...shared,
      git: this.#s.git,
      link: this.#s.forge ?? null,
      missing: this.#s.forgeMissing ?? null,
      landing,
      spec: (id) => this.#backlog.specs.get(id),
      specs: () => this.#backlog.specs,
      config: () => this.#backlog.config,
      order: () => this.#backlog.order,
      tickDone: this.#s.tickDone,
      autoLand: (id) => {
        const spec = this.#backlog.specs.get(id);
        return spec !== undefined && (this.#opts.autoMerge || autonomyOf(spec, this.#backlog.config) === 'auto');
      },
      signal: this.#stop.signal,
      log: (id, message, level = 'info') => this.events.emit('log', { level, message, ...(id === 'fleet' ? {} : { id }) }),
    });
    this.#runner = new TaskRunner({
      ...shared,
      executor: this.#s.executor ?? new InProcessExecutor(this.#pipeline),
      clock: this.#s.clock,
      workspace: this.#s.workspace,
      usage: { book: (id, role, model, delta, reportedUsd) => this.#account(id, role, model, delta, reportedUsd) },
      fleetBudget: this.#budget,
      limits: this.#limits,
      lessons: this.#s.lessons,
      claims: (id) => this.#scheduler.claims(id),
      stop: this.#stop.signal,
      limitHit: (error) => this.resourceLimit(error),
    });
    this.#state.base = this.base;
    lifecycle.requeueCrashed();
    this.#backlog.ensure(this.#state);
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

  /** Copies of the tasks in backlog order, then the ones the backlog no longer lists that are not queued. */
  tasks(): TaskState[] {
    return structuredClone(this.#backlog.records(this.#state) as TaskState[]);
  }

  /** A copy of the task's record: callers never hold the engine's own. */
  task(id: string): TaskState | undefined {
    const task = this.#state.get(id);
    return task === undefined ? undefined : structuredClone(task as TaskState);
  }

  summary(): FleetSnapshotSummary {
    const hold = this.#phase.hold;
    return {
      state: this.#phase.current,
      counts: this.#backlog.counts(this.#state),
      totals: this.#totals(),
      stoppedBy: this.#stoppedBy,
      ...(hold === null ? {} : { hold }),
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
    if (this.#started || this.#stop.signal.aborted) return; // a stopped fleet never starts again
    this.#budget.start();
    const startedAt = new Date(this.#budget.startedAt!).toISOString();
    this.#state.updateFleet((f) => (f.startedAt ??= startedAt));
    this.#started = true;
    this.#phase.set('running');
    this.#scheduler.start();
    this.#scheduler.schedule();
  }

  /** Resolves when nothing is running and nothing more can start. */
  whenIdle(): Promise<void> {
    return this.#scheduler.whenIdle();
  }

  pause(): void {
    this.#scheduler.pause();
    this.#phase.set('paused');
  }

  /**
   * The fleet holds: no new task starts until `until` (epoch ms; null: until resume()), for `reason` (a usage
   * or rate limit). Running tasks go on. The summary carries the reason and the time while it holds.
   */
  hold(reason: string, until: number | null, backoff = false): void {
    if (this.#stop.signal.aborted) return;
    this.#phase.holdFor(reason, until, backoff);
    this.pause();
  }

  resume(): void {
    if (this.#stop.signal.aborted) return;
    this.#phase.release();
    this.#scheduler.start();
    this.#phase.set('running');
    this.#scheduler.schedule();
  }

  async stop(reason: Error = new StopError('the fleet was stopped')): Promise<void> {
    if (!this.#stop.signal.aborted) {
      this.#scheduler.halt();
      this.#phase.set('stopping');
      this.#stop.abort(reason);
    }
    await this.#scheduler.settled();
    this.#budget.dispose();
    this.#phase.release();
    this.#scheduler.dispose();
    await this.#merges.settled();
    await this.#pulls.settled();
    await this.#notifier.drained();
    await this.#state.flush({ closing: true });
    await this.#s.workspace.flush();
    this.#phase.set('finished');
  }

  /**
   * Replace the backlog (BACKLOG.md changed): queue new tasks, drop removed queued ones, never kill a running
   * one. Settings apply from now on (the caller has applied the command line's overrides); `ports:` keeps
   * the range the fleet started with, since running tasks hold ports from it.
   */
  applyBacklog(backlog: Backlog): void {
    const { added, removed } = this.#backlog.replace(backlog);
    this.#scheduler.concurrency = this.#limits.probing ? 1 : this.#backlog.config.concurrency;
    if (this.#state !== undefined) this.#backlog.ensure(this.#state);
    for (const id of removed) {
      if (this.#state.get(id)?.status === 'queued') this.#scheduler.forget(id);
    }
    if (added.length > 0 || removed.length > 0) this.events.emit('backlog', { added, removed });
    this.#emitFleet();
    this.#scheduler.schedule();
  }

  /** Merge a verified task; under `land: pr`, push its branch and open or update its pull request instead. */
  async merge(id: string): Promise<void> {
    if (this.#pulls.lands(id)) await this.#pulls.publish(id);
    else await this.#merges.merge(id);
    this.#scheduler.schedule();
  }

  /** whether any task lands through a pull request (`land: pr`) */
  get landsByPr(): boolean {
    return this.#backlog.order.some((id) => this.#pulls.lands(id));
  }

  /** One pass over the open pull requests (see core/forge/pr-sync.ts); tasks it sends back start as usual. */
  async sync(): Promise<SyncResult> {
    const result = await this.#pulls.sync();
    this.#scheduler.schedule();
    return result;
  }

  /**
   * The merge queue over the verified tasks in backlog order (or just `ids`): each is rebased onto base as
   * the previous merge left it, checked again there, and merged only when the checks pass; one that
   * conflicts or fails goes back for a new attempt with that as evidence. Merges never run two at once.
   */
  async mergeAll(ids: readonly string[] = this.#backlog.order): Promise<QueueResult> {
    // Tasks that land by pull request have their PRs opened or updated; the forge merges them.
    for (const id of ids.filter((i) => this.#pulls.lands(i) && this.#state.get(i)?.status === 'verified')) await this.#pulls.afterVerified(id);
    const result = await this.#merges.land(ids.filter((i) => !this.#pulls.lands(i)), this.#backlog.specs, this.#backlog.config);
    this.#scheduler.schedule();
    return result;
  }

  /**
   * BACKLOG.md was deleted or renamed away: running tasks finish, no queued task starts, and the run will
   * end (exit 1) saying so — unless the file comes back first (backlogBack).
   */
  backlogGone(): void {
    if (!this.#backlog.gone()) return;
    const waiting = this.tasks().filter((t) => t.status === 'queued').map((t) => t.id);
    this.events.emit('log', {
      level: 'warn',
      message: `${this.backlogPath} was deleted or renamed: running tasks finish, ${waiting.length === 0 ? 'nothing else starts' : `${waiting.join(', ')} will not start`}; restore it to go on`,
    });
    this.#scheduler.schedule();
  }

  backlogBack(): void {
    if (!this.#backlog.back()) return;
    this.events.emit('log', { level: 'info', message: `${this.backlogPath} is back: queued tasks start again` });
    this.#scheduler.schedule();
  }

  /** the full disk that stopped the run, if one did */
  get diskFull(): DiskFullError | null {
    return this.#diskFull;
  }

  /** the limit (open files, memory) that stopped the run, if one did */
  get limit(): ResourceLimitError | null {
    return this.#limit;
  }

  /**
   * The machine ran out of open files or memory: the run stops at once, said in one line; the attempts it
   * was in are queued again, not charged (nothing an agent did caused it).
   */
  resourceLimit(error: ResourceLimitError): void {
    if (this.#limit !== null) return;
    this.#limit = error;
    this.events.emit('log', { level: 'error', message: error.message });
    void this.stop(new StopError(error.message.slice(0, error.message.indexOf(':')))).catch(() => undefined);
  }

  /** A state save that failed for a full disk stops the run: nothing more is spent that could not be recorded. */
  #saveFailed(error: Error): void {
    if (!(error instanceof DiskFullError) || this.#diskFull !== null) return;
    this.#diskFull = error;
    this.events.emit('log', { level: 'error', message: error.message });
    void this.stop(new StopError('disk full')).catch(() => undefined);
  }

  /** true while BACKLOG.md is gone (see backlogGone) */
  get backlogMissing(): boolean {
    return this.#backlog.missing;
  }

  /** Stop the merge queue after the task it is on (its check is aborted; base stays at the last good merge). */
  stopLanding(): void {
    this.#merges.stopLanding();
  }

  /** A task awaiting approval runs again implementing `plan` (default: the explorer's plan, as it is). */
  approve(id: string, plan?: string): void {
    this.#actions.approve(id, plan);
    this.#scheduler.schedule();
  }

  /** A verified task whose autonomy lets it land (`auto`, or --auto-merge): the one place that merges it unasked. */
  async #landVerified(id: string): Promise<void> {
    // Through the merge queue: rebased onto base as it is now and checked again before it lands.
    await this.mergeAll([id]).catch((error: Error) => this.events.emit('log', { level: 'warn', id, message: `auto-merge: ${error.message}` }));
  }

  async discard(id: string): Promise<void> {
    const pr = this.#state.get(id)?.pr;
    await this.#actions.discard(id);
    // loopfleet never closes a pull request itself: the person is told where it stays open.
    if (pr?.state === 'open') this.events.emit('log', { level: 'warn', id, message: `PR #${pr.number} stays open on the forge: close it there (${pr.url})` });
    this.#scheduler.schedule();
  }

  /** A failed or discarded task runs again with a fresh budget; a conflict one is rebased (or replayed, see FleetActions.retry). */
  async retry(id: string): Promise<void> {
    if (await this.#actions.retry(id)) this.#scheduler.schedule();
  }

  /** Every task transition: one `task` event (a copy), and for a status change the fleet's counts and `notify:`. */
  #taskChanged({ task, previousStatus }: TaskChange): void {
    this.events.emit('task', { task, previousStatus });
    if (previousStatus === null || previousStatus === task.status) return;
    // A branch newly verified, or base moved by a merge: predict the verified branches' conflicts again.
    if (task.status === 'verified' || task.status === 'merged') this.#merges.forecast(this.#backlog.order);
    if (task.status === 'running') this.#ranThisRun.add(task.id);
    if (task.status === 'merged' || task.status === 'discarded') this.#scheduler.recur(task.id);
    this.#emitFleet();
    this.#notifier.send({ event: 'status', id: task.id, title: task.title, status: task.status, previousStatus, reason: task.reason, branch: task.branch });
  }

  /** One queued task's attempt; a verified one whose autonomy lets it land goes through the merge queue. */
  async #run(spec: TaskSpec): Promise<void> {
    await this.#runner.run(spec, this.#backlog.config);
    if (this.#pulls.lands(spec.id)) {
      // Landed on the forge: a sync merges it once CI is green when its autonomy allows (pr-keep.ts).
      if (this.#state.get(spec.id)?.status === 'verified') await this.#pulls.afterVerified(spec.id);
      return;
    }
    if ((this.#opts.autoMerge || autonomyOf(spec, this.#backlog.config) === 'auto') && this.#state.get(spec.id)?.status === 'verified') {
      await this.#landVerified(spec.id);
    }
  }

  #account(id: string, role: Role, model: string, delta: Usage, reportedUsd?: number): void {
    const { task, costUsd } = this.#accounting.book(id, role, model, delta, this.#backlog.config.prices, reportedUsd);
    this.#budget.spend(delta, costUsd);
    this.events.emit('usage', { id, role, model, delta, costUsd, task: { ...task.usage }, taskCostUsd: task.costUsd, fleet: this.#totals() });
  }

  /** The fleet's spending so far; cheap (no pass over the tasks), so every usage report can carry it. */
  #totals(): FleetSnapshotSummary['totals'] {
    return {
      usage: { ...this.#state.fleet.usage },
      costUsd: this.#state.fleet.costUsd,
      elapsedMs: this.#budget.elapsedMs(),
      startedAt: this.#state.fleet.startedAt,
    };
  }

  #emitFleet(): void {
    if (this.#state === undefined) return;
    this.events.emit('fleet', this.summary());
  }
}

