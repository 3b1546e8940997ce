import { join } from 'node:path';
import { StopError, type DiskFullError, type ResourceLimitError } from '../../domain/errors.js';
import { StopCauses } from './stops.js';
import { FleetEmitter, type FleetSnapshotSummary } from '../task/events.js';
import type { FleetHandle, ReviewWait } from './handle.js';
import { FleetBudget } from '../budget/gates.js';
import { BacklogView } from './backlog-view.js';
import { Pipeline } from '../attempt/pipeline.js';
import { PortPool } from '../attempt/port-pool.js';
import type { FleetOptions, FleetServices } from './services.js';
import { WORK_DIR, taskBranch } from '../../domain/layout.js';
import { FleetState } from '../task/state.js';
import { TaskRunner } from '../task/runner.js';
import { InProcessExecutor } from '../executor/attempt-executor.js';
import type { QueueResult } from '../land/merge-queue.js';
import { RateLimits } from '../budget/rate-limits.js';
import { RunPhase } from './run-phase.js';
import type { TaskChange } from '../task/transitions.js';
import { Accounting } from './accounting.js';
import { pruneWorktrees, type PruneResult } from './prune.js';
import { Notifier } from './notify-digest.js';
import { Scheduler } from './scheduler.js';
import { ReviewPacing } from './review-pacing.js';
import { Decomposition } from './decomposition.js';
import { needsPerson, reviewLoad } from '../task/review-load.js';
import { SetupTrust } from '../attempt/setup-trust.js';
import type { SyncResult } from '../land/pr/pull-requests.js';
import { FleetLanding } from './landing-routes.js';
import type { Backlog, FleetConfig, GateName, Role, TaskSpec, TaskState, Usage } from '../../domain/types.js';

export type { FleetOptions, FleetServices } from './services.js';

/**
 * The fleet: the one handle the commands, the TUI and the headless printer hold; they only listen to
 * `events` and call the commands. It wires the engine's parts and keeps none of their state: which queued
 * task starts when is the Scheduler's, the phase and a limit's hold RunPhase's, how a finished task lands
 * (merges, forecasts, pull requests) FleetLanding's, why the run stopped StopCauses', what the backlog lists
 * BacklogView's, one task's attempt the TaskRunner's. Invariants: a
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
  #landing!: FleetLanding;
  #accounting!: Accounting;
  readonly #budget: FleetBudget;
  readonly #causes: StopCauses;
  readonly #limits: RateLimits;
  readonly #phase: RunPhase;
  /** set by start(): a fleet opened only to merge or discard never starts tasks */
  #started = false;
  #ranThisRun = new Set<string>();
  readonly #notifier: Notifier;
  readonly #pacing: ReviewPacing;
  readonly #parts: Decomposition;

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
    services.executor?.trustSetupWith?.(this.#setupTrust);
    this.#notifier = new Notifier(
      () => this.#backlog.config,
      (command, payload) => services.notify(command, payload),
    );
    this.#phase = new RunPhase({
      clock: services.clock,
      notifier: this.#notifier,
      emit: () => this.#emitFleet(),
      counts: () => this.summary().counts,
      due: () => this.resume(),
    });
    this.#ports = new PortPool(this.#backlog.config.ports);
    this.#parts = new Decomposition({
      state: () => this.#state,
      backlog: this.#backlog,
      events: this.events,
      ...(services.writeParts === undefined ? {} : { writeParts: services.writeParts }),
      path: options.backlog.path,
    });
    this.#pacing = new ReviewPacing({
      clock: services.clock,
      events: this.events,
      notifier: this.#notifier,
      emit: () => this.#emitFleet(),
    });
    this.#scheduler = new Scheduler(
      {
        clock: services.clock,
        events: this.events,
        stop: this.#stop.signal,
        state: () => this.#state,
        backlog: () => this.#backlog,
        open: () =>
          this.#started &&
          !this.#stop.signal.aborted &&
          this.#phase.current !== 'stopping' &&
          this.#phase.current !== 'finished' &&
          !this.#backlog.missing,
        run: (spec) => this.#run(spec),
        busy: (busy) => {
          if (busy && this.#phase.current === 'idle') this.#phase.set('running');
          if (!busy && this.#phase.current === 'running') this.#phase.set('idle');
        },
        review: (inFlight) =>
          reviewLoad(
            this.#backlog.order,
            (id) => this.#state.get(id),
            (id) => this.#backlog.specs.get(id),
            this.#backlog.config,
            options.autoMerge,
            inFlight,
          ),
        // A best-of-N task's candidates run at once, so each takes a slot (a worker pool runs one implementer).
        slots: (spec) =>
          services.executor !== undefined && services.executor.choose === undefined
            ? 1
            : (spec.parallel ?? this.#backlog.config.parallel),
        needsPerson: (spec) => needsPerson(spec, this.#backlog.config, options.autoMerge),
        paced: (load, held) => this.#pacing.update(load, held),
      },
      this.#backlog.config.concurrency,
    );
    this.#causes = new StopCauses({
      events: this.events,
      stop: (reason) => this.stop(reason),
      stopping: () => this.#stop.signal.aborted,
    });
    this.#budget = new FleetBudget(
      () => this.#backlog.config.fleetGates,
      () => services.clock.now(),
      (gate) => this.#causes.gateTripped(gate),
    );
    this.#limits = new RateLimits(
      {
        now: () => services.clock.now(),
        hold: (reason, until, backoff) => this.hold(reason, until, backoff),
        holding: () => this.#phase.holding,
        probe: (on) => (this.#scheduler.concurrency = on ? 1 : this.#backlog.config.concurrency),
        stop: (reason) => this.#causes.rateLimited(reason),
      },
      options.noWait === true,
    );
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
    this.#state.onSaveError((error) => this.#causes.saveFailed(error));
    lifecycle.listen((change) => this.#taskChanged(change));
    this.#accounting = new Accounting(this.#state);
    const paths = { worktreeOf: (id: string) => this.worktreeOf(id), branchOf: (id: string) => this.branchOf(id) };
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
    this.#landing = new FleetLanding({
      shared,
      state: this.#state,
      git: this.#s.git,
      setupTrust: this.#setupTrust,
      forge: this.#s.forge ?? null,
      forgeMissing: this.#s.forgeMissing ?? null,
      tickDone: this.#s.tickDone,
      spec: (id) => this.#backlog.specs.get(id),
      specs: () => this.#backlog.specs,
      config: () => this.#backlog.config,
      order: () => this.#backlog.order,
      autoMerge: this.#opts.autoMerge,
      markRan: (id) => this.#ranThisRun.add(id),
      schedule: () => this.#scheduler.schedule(),
      stop: this.#stop.signal,
    });
    this.#runner = new TaskRunner({
      ...shared,
      executor: this.#s.executor ?? new InProcessExecutor(this.#pipeline),
      clock: this.#s.clock,
      workspace: this.#s.workspace,
      git: this.#s.git,
      usage: { book: (id, role, model, delta, reportedUsd) => this.#account(id, role, model, delta, reportedUsd) },
      fleetBudget: this.#budget,
      limits: this.#limits,
      lessons: this.#s.lessons,
      claims: (id) => this.#scheduler.claims(id),
      stop: this.#stop.signal,
      limitHit: (error) => this.resourceLimit(error),
      split: (spec, parts, plan, ended) => this.#parts.split(spec, parts, plan, ended),
    });
    this.#state.base = this.base;
    lifecycle.requeueCrashed();
    this.#backlog.ensure(this.#state);
    this.#parts.reconcile();
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

  /**
   * What a queued task waits behind when `review_capacity:` is reached and the task needs a person; null
   * otherwise. The same rule `status --json` applies to state, so both say the same of one task.
   */
  waitingForReview(id: string): ReviewWait | null {
    const review = this.#pacing.summary();
    const spec = this.#backlog.specs.get(id);
    if (review === undefined || spec === undefined || this.#state.get(id)?.status !== 'queued') return null;
    if (review.running + review.waiting < review.capacity) return null;
    if (!needsPerson(spec, this.#backlog.config, this.#opts.autoMerge)) return null;
    return { running: review.running, waiting: review.waiting, capacity: review.capacity };
  }

  summary(): FleetSnapshotSummary {
    const hold = this.#phase.hold;
    const review = this.#pacing.summary();
    return {
      state: this.#phase.current,
      counts: this.#backlog.counts(this.#state),
      totals: this.#totals(),
      stoppedBy: this.#causes.gate,
      ...(hold === null ? {} : { hold }),
      ...(review === undefined ? {} : { review }),
    };
  }

  get stoppedBy(): GateName | null {
    return this.#causes.gate;
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
    // A merge queue a run before left unfinished lands first; the fleet is not idle until it has.
    const unlanded = this.#landing.unlanded();
    if (unlanded.length > 0) this.#scheduler.alongside('merge queue', () => this.#landing.resumeLanding(unlanded));
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
    await this.#landing.settled();
    await this.#parts.settled();
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
    if (this.#state !== undefined) {
      this.#backlog.ensure(this.#state);
      // A split task waits for the parts BACKLOG.md lists now: a person may have removed or added some.
      this.#parts.reconcile();
    }
    for (const id of removed) {
      if (this.#state.get(id)?.status === 'queued') this.#scheduler.forget(id);
    }
    if (added.length > 0 || removed.length > 0) this.events.emit('backlog', { added, removed });
    this.#emitFleet();
    this.#scheduler.schedule();
  }

  /** Merge a verified task; under `land: pr`, push its branch and open or update its pull request instead. */
  merge(id: string): Promise<void> {
    return this.#landing.merge(id);
  }

  /** whether any task lands through a pull request (`land: pr`) */
  get landsByPr(): boolean {
    return this.#landing.landsByPr;
  }

  /** One pass over the open pull requests (see {@link syncPulls}); tasks it sends back start as usual. */
  sync(): Promise<SyncResult> {
    return this.#landing.sync();
  }

  /** Verified tasks that land by pull request and have none open get theirs opened, or found again by branch. */
  openPending(): Promise<string[]> {
    return this.#landing.openPending();
  }

  /**
   * The merge queue over the verified tasks in backlog order (or just `ids`): each is rebased onto base as
   * the previous merge left it, checked again there, and merged only when the checks pass; one that
   * conflicts or fails goes back for a new attempt with that as evidence. Merges never run two at once.
   * Tasks that land by pull request have their PRs opened or updated instead; the forge merges them.
   */
  mergeAll(ids: readonly string[] = this.#backlog.order): Promise<QueueResult> {
    return this.#landing.mergeAll(ids);
  }

  /**
   * BACKLOG.md was deleted or renamed away: running tasks finish, no queued task starts, and the run will
   * end (exit 1) saying so — unless the file comes back first (backlogBack).
   */
  backlogGone(): void {
    if (!this.#backlog.gone()) return;
    const waiting = this.tasks()
      .filter((t) => t.status === 'queued')
      .map((t) => t.id);
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
    return this.#causes.diskFull;
  }

  /** the limit (open files, memory) that stopped the run, if one did */
  get limit(): ResourceLimitError | null {
    return this.#causes.limit;
  }

  /** The machine ran out of open files or memory: the run stops at once (see StopCauses.resourceLimit). */
  resourceLimit(error: ResourceLimitError): void {
    this.#causes.resourceLimit(error);
  }

  /** true while BACKLOG.md is gone (see backlogGone) */
  get backlogMissing(): boolean {
    return this.#backlog.missing;
  }

  /** Stop the merge queue after the task it is on (its check is aborted; base stays at the last good merge). */
  stopLanding(): void {
    this.#landing.stopLanding();
  }

  /** A task awaiting approval runs again implementing `plan` (default: the explorer's plan, as it is). */
  approve(id: string, plan?: string): void {
    this.#landing.approve(id, plan);
  }

  discard(id: string): Promise<void> {
    return this.#landing.discard(id);
  }

  /** A failed or discarded task runs again with a fresh budget; a conflict one is rebased (or replayed, see FleetActions.retry). */
  retry(id: string): Promise<void> {
    return this.#landing.retry(id);
  }

  /** Every task transition: one `task` event (a copy), and for a status change the fleet's counts and `notify:`. */
  #taskChanged({ task, previousStatus }: TaskChange): void {
    this.events.emit('task', { task, previousStatus });
    if (previousStatus === null || previousStatus === task.status) return;
    // A branch newly verified, or base moved by a merge: predict the verified branches' conflicts again.
    if (task.status === 'verified' || task.status === 'merged') this.#landing.forecast();
    if (task.status === 'running') this.#ranThisRun.add(task.id);
    if (task.status === 'merged' || task.status === 'discarded') this.#scheduler.recur(task.id);
    // A part that cannot land stops the parts after it and its task, after this change's own listeners.
    const parent = this.#backlog.specs.get(task.id)?.parent;
    if (parent !== undefined && (task.status === 'failed' || task.status === 'discarded'))
      queueMicrotask(() => this.#parts.partStopped(task, parent));
    // A part that met a conflict landing: the merge refused it, or the merge queue sent it back for one.
    const sentBack = previousStatus === 'verified' && task.status === 'queued' && /conflict/.test(task.reason ?? '');
    if (parent !== undefined && this.#state.get(parent) !== undefined && (task.status === 'conflict' || sentBack))
      this.#state.lifecycle.countPartConflict(parent);
    this.#emitFleet();
    this.#notifier.send({
      event: 'status',
      id: task.id,
      title: task.title,
      status: task.status,
      previousStatus,
      reason: task.reason,
      branch: task.branch,
    });
  }

  /** One queued task's attempt; a verified one whose autonomy lets it land goes through the merge queue. */
  async #run(spec: TaskSpec): Promise<void> {
    // A split task runs no attempt of its own once its parts have landed: its check runs on base.
    if ((this.#state.get(spec.id)?.parts ?? []).length > 0) return this.#landing.finishParent(spec.id);
    await this.#runner.run(spec, this.#backlog.config);
    await this.#landing.afterRun(spec);
  }

  #account(id: string, role: Role, model: string, delta: Usage, reportedUsd?: number): void {
    const { task, costUsd } = this.#accounting.book(id, role, model, delta, this.#backlog.config.prices, reportedUsd);
    this.#budget.spend(delta, costUsd);
    this.events.emit('usage', {
      id,
      role,
      model,
      delta,
      costUsd,
      task: { ...task.usage },
      taskCostUsd: task.costUsd,
      fleet: this.#totals(),
    });
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
