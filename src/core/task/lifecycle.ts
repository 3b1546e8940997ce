import { isDeepStrictEqual } from 'node:util';
import type { Clock } from '../../ports/clock.js';
import { statusWhenTicked } from '../../domain/task-rules.js';
import type {
  ConflictDetail,
  GateName,
  PrRecord,
  Phase,
  Role,
  RunRecord,
  TaskGates,
  TaskSpec,
  TaskState,
  WorkerFlag,
  TaskStatus,
  Usage,
} from '../../domain/types.js';
import {
  bookUsage,
  endAttempt,
  endRun,
  newRecord,
  refreshSpec,
  requeueEdit,
  specChanged,
  startAttempt,
} from './edits.js';
import * as landing from './pr-edits.js';
import {
  type EndedAttempt,
  FROM,
  IllegalTransitionError,
  type RequeueCause,
  type TaskChange,
  type TaskChangeListener,
  type Transition,
} from './transitions.js';

/**
 * The one writer of task records.
 *
 * Invariants: every write goes through a method here; each transition checks the current status (throwing
 * IllegalTransitionError), writes the record, saves (at once when the status changed) and tells the
 * listeners exactly once, with a deep copy. Bookkeeping (usage, running time) writes without a `task`
 * event: usage has its own event, and time is derived live by the views.
 */
export class TaskLifecycle {
  readonly #records: Record<string, TaskState>;
  readonly #clock: Clock;
  readonly #save: (id: string, flush: boolean) => void;
  readonly #listeners = new Set<TaskChangeListener>();
  /** how many records have each status, and which are queued: kept with every write, never recounted */
  readonly #counts = new Map<TaskStatus, number>();
  readonly #queued = new Set<string>();

  constructor(records: Record<string, TaskState>, clock: Clock, save: (id: string, flush: boolean) => void) {
    this.#records = records;
    this.#clock = clock;
    this.#save = save;
    for (const task of Object.values(records)) this.#count(task.id, null, task.status);
  }

  /** The number of records with `status`, in time independent of the number of tasks. */
  countOf(status: TaskStatus): number {
    return this.#counts.get(status) ?? 0;
  }

  /** The ids of the queued records. */
  queuedIds(): ReadonlySet<string> {
    return this.#queued;
  }

  #count(id: string, from: TaskStatus | null, to: TaskStatus): void {
    if (from === to) return;
    if (from !== null) this.#counts.set(from, (this.#counts.get(from) ?? 0) - 1);
    this.#counts.set(to, (this.#counts.get(to) ?? 0) + 1);
    if (from === 'queued') this.#queued.delete(id);
    if (to === 'queued') this.#queued.add(id);
  }

  /** Call `listener` after every transition; returns the unsubscribe function. */
  listen(listener: TaskChangeListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  get(id: string): Readonly<TaskState> | undefined {
    return this.#records[id];
  }

  all(): Readonly<TaskState>[] {
    return Object.values(this.#records);
  }

  /**
   * The task's record, created on first sight (`queued`, or `merged` for an item ticked `[x]`), its title
   * and gates refreshed from the backlog. An item ticked since goes through the merge transition.
   */
  ensure(spec: TaskSpec, gates: TaskGates): Readonly<TaskState> {
    const existing = this.#records[spec.id];
    if (existing === undefined) {
      const task = newRecord(spec, gates, this.#now());
      this.#records[spec.id] = task;
      this.#count(spec.id, null, task.status);
      this.#save(spec.id, true);
      this.#tell(task, null);
      return task;
    }
    if (statusWhenTicked(spec.done, existing.status) !== existing.status) {
      this.#transition(spec.id, 'mergeTicked', 'merged', (t) => {
        t.phase = null;
      });
    }
    if (specChanged(existing, spec, gates)) {
      this.#write(spec.id, (t) => refreshSpec(t, spec, gates));
      this.#tell(existing, existing.status);
    }
    return existing;
  }

  /** Every task a crash or a kill left `running` goes back to `queued` (see requeue `crashed`). */
  requeueCrashed(): void {
    for (const task of this.all()) if (task.status === 'running') this.requeue(task.id, { kind: 'crashed' });
  }

  /** Attempt `n` starts: `running`, phase `setup`. An interrupted attempt `n` is replaced by this one, its spending kept. */
  startAttempt(id: string, n: number, branch: string): void {
    const now = this.#now();
    this.#transition(id, 'startAttempt', 'running', (t) => startAttempt(t, n, branch, now));
  }

  setPhase(id: string, phase: Phase): void {
    this.#transition(id, 'setPhase', 'running', (t) => {
      t.phase = phase;
    });
  }

  /** The worker that runs the attempt (an attempt run on a worker): told like a phase. */
  setWorker(id: string, worker: string): void {
    this.#transition(id, 'setWorker', 'running', (t) => {
      t.worker = worker;
    });
  }

  /**
   * The worker that ran attempt `attempt` claimed a result the coordinator's own check contradicts: kept on
   * the task (shown by status and the view) until a later claim of another is flagged in its place.
   */
  flagWorker(id: string, flag: WorkerFlag): void {
    this.#transition(id, 'flagWorker', 'running', (t) => {
      t.workerFlag = { ...flag };
    });
  }

  /**
   * An attempt ended and the task stays `running` until its next step is decided (another attempt, or a
   * gate). When the status follows from the attempt alone, the transition that sets it takes `ended` instead.
   */
  finishAttempt(id: string, ended: EndedAttempt): void {
    this.#transition(id, 'finishAttempt', 'running', (t) => endAttempt(t, ended), true);
  }

  verify(id: string, ended?: EndedAttempt): void {
    this.#transition(id, 'verify', 'verified', (t) => {
      endAttempt(t, ended);
      t.phase = null;
      t.reason = null;
    });
  }

  /** The task stops: a gate tripped (`gate` names it) or something broke (`gate` null). */
  fail(id: string, failure: { gate: GateName | null; reason: string }, ended?: EndedAttempt): void {
    this.#transition(id, 'fail', 'failed', (t) => {
      endAttempt(t, ended);
      t.phase = null;
      t.reason = failure.reason;
      t.gate = failure.gate;
    });
  }

  /**
   * The explorer's plan waits for a person's approval before anything is written. `ended`: the attempt
   * that made the plan; it is recorded `interrupted`, so it does not count against the attempts gate.
   */
  awaitApproval(id: string, reason: string | null = null, ended?: EndedAttempt): void {
    this.#transition(id, 'awaitApproval', 'awaiting-approval', (t) => {
      endAttempt(t, ended);
      t.phase = null;
      t.reason = reason;
    });
  }

  /**
   * The explorer's plan names files a running or unmerged task also plans to change: the task waits,
   * `queued`, keeping its plan (its next attempt implements it without exploring again) — the attempt is
   * recorded `interrupted`, so waiting uses up no attempt.
   */
  waitFor(id: string, blocker: { id: string; files: string[] }, plan: string, ended?: EndedAttempt): void {
    this.#transition(id, 'waitFor', 'queued', (t) => {
      endAttempt(t, ended);
      t.phase = null;
      t.waitingFor = blocker;
      t.approvedPlan = plan;
      t.currentPlan = null;
      t.reason = `waiting: overlaps ${blocker.id} on ${blocker.files.join(', ')}`;
    });
  }

  /**
   * The explorer answered with parts (`split: auto`): the task waits `queued` until every part has landed,
   * then only its check runs, on base. The attempt is recorded `interrupted`: splitting uses up no attempt.
   */
  split(id: string, parts: string[], plan: string, ended?: EndedAttempt): void {
    this.#transition(id, 'split', 'queued', (t) => {
      endAttempt(t, ended);
      t.phase = null;
      t.parts = [...parts];
      t.waitingFor = null;
      t.approvedPlan = plan;
      t.currentPlan = null;
      t.reason = `split into ${parts.length} parts: ${parts.join(', ')}; done once they have landed and its check passes`;
    });
  }

  /** Every part of a split task landed and its check passed on base: the task's work is on base. */
  partsLanded(id: string, reason: string): void {
    this.#transition(id, 'partsLanded', 'merged', (t) => {
      t.phase = null;
      t.reason = reason;
      t.branch = null;
    });
  }

  /**
   * A person edited a split task's parts in BACKLOG.md: it waits for `parts` now (an empty list: it has none
   * left, and runs as an unsplit task once it runs again). No status change; one `task` event.
   */
  setParts(id: string, parts: readonly string[]): void {
    const task = this.#need(id);
    this.#write(
      id,
      (t) => {
        if (parts.length === 0) delete t.parts;
        else t.parts = [...parts];
      },
      true,
    );
    this.#tell(task, task.status);
  }

  /** A part of split task `id` met a conflict on its way to base (bookkeeping: no event). */
  countPartConflict(id: string): void {
    this.#write(id, (t) => {
      t.partConflicts = (t.partConflicts ?? 0) + 1;
    });
  }

  /** The running attempt's plan, as soon as its explorer wrote it (bookkeeping: no event). */
  recordPlan(id: string, plan: string): void {
    this.#write(id, (t) => {
      t.currentPlan = plan;
    });
  }

  /** A person approved `plan` (the explorer's, or their edit of it): the task is queued to implement it. */
  approve(id: string, plan: string): void {
    this.#transition(id, 'approve', 'queued', (t) => {
      t.approvedPlan = plan;
      t.reason = 'plan approved';
    });
  }

  /** `ended`: the attempt the task was in, for a requeue `interrupted`. */
  requeue(id: string, cause: RequeueCause, ended?: EndedAttempt): void {
    const name = (
      {
        interrupted: 'requeueInterrupted',
        crashed: 'requeueCrashed',
        retry: 'requeueRetry',
        rebased: 'requeueRebased',
        replayed: 'requeueReplayed',
      } as const
    )[cause.kind];
    this.#transition(id, name, 'queued', requeueEdit(cause, this.#now(), ended));
  }

  merge(id: string, reason: string | null): void {
    this.#transition(id, 'merge', 'merged', (t) => {
      t.reason = reason;
      t.phase = null;
    });
  }

  discard(id: string, reason: string): void {
    this.#transition(id, 'discard', 'discarded', (t) => {
      delete t.approvedPlan;
      t.reason = reason;
      t.phase = null;
      t.branch = null;
    });
  }

  /** `conflicts`: what conflicts, with its marker regions when known (the detail pane shows them). */
  conflict(id: string, reason: string, conflicts: ConflictDetail[] = []): void {
    this.#transition(id, 'conflict', 'conflict', (t) => {
      t.reason = reason;
      t.conflicts = conflicts;
    });
  }

  /**
   * A recurring task's run is over: it is recorded in `runs` with its own cost and tokens (what the task
   * spent since the run's budget began), and the task waits `queued` for `everyMs` with a fresh budget.
   * The next run is counted from the very instant recorded as this run's end, so a run never starts
   * sooner than `everyMs` after the `endedAt` a reader sees.
   * `ended`: the attempt that found nothing to change, for a run that ends while `running`.
   */
  reschedule(id: string, everyMs: number, outcome: RunRecord['outcome'], ended?: EndedAttempt): void {
    const now = this.#now();
    const nextRunAt = new Date(Date.parse(now) + everyMs).toISOString();
    this.#transition(id, 'reschedule', 'queued', (t) => {
      endAttempt(t, ended);
      endRun(t, outcome, now, nextRunAt);
    });
  }

  /** Running time of the current attempt, brought up to date. Bookkeeping: no `task` event. */
  recordTime(id: string, elapsedMs: number): void {
    this.#write(id, (t) => {
      t.elapsedMs = elapsedMs;
    });
  }

  /**
   * One usage report, added once to the task and to its current attempt (by role). `unpriced` names a model
   * the price table does not know. Bookkeeping: the fleet tells subscribers with its `usage` event.
   */
  book(id: string, role: Role, delta: Usage, costUsd: number, unpriced: string | null): Readonly<TaskState> {
    return this.#write(id, (t) => bookUsage(t, role, delta, costUsd, unpriced));
  }

  /**
   * A verified task the merge queue could not land — its rebase onto the new base conflicts, or its checks
   * fail there — goes back to the queue within its budget; `evidence` is what its next attempt is told.
   */
  sendBack(id: string, reason: string, evidence: string): void {
    this.#transition(id, 'sendBack', 'queued', (t) => landing.sendBack(t, reason, evidence));
  }

  /**
   * The task's pull request as loopfleet last saw it (opened, found again, pushed to, read by a sync). No
   * status change; one `task` event when the record changed.
   */
  recordPr(id: string, pr: PrRecord): void {
    const task = this.#need(id);
    if (isDeepStrictEqual(task.pr, pr)) return;
    this.#write(
      id,
      (t) => {
        t.pr = structuredClone(pr);
      },
      true,
    );
    this.#tell(task, task.status);
  }

  /** The pull request was merged on the forge: the task is `merged`, its worktree and branch already gone. */
  prMerged(id: string, reason: string | null): void {
    this.#transition(id, 'prMerged', 'merged', (t) => landing.prMerged(t, reason));
  }

  /**
   * The pull request was merged on the forge at a head older than the task's last verified commit, and base
   * lacks that commit: the task stays `verified` (its branch kept, to be offered again), told `reason`.
   */
  prMergedBehind(id: string, pr: PrRecord, reason: string): void {
    const task = this.#need(id);
    this.#write(
      id,
      (t) => {
        t.pr = structuredClone(pr);
        t.reason = reason;
      },
      true,
    );
    this.#tell(task, task.status);
  }

  /** The pull request was closed unmerged: the task is `discarded`, its branch kept under the recoverable ref. */
  prClosed(id: string, reason: string): void {
    this.#transition(id, 'prClosed', 'discarded', (t) => landing.prClosed(t, reason));
  }

  /**
   * The pull request's CI failed or a reviewer asked for changes: back to the queue for a new attempt on the
   * same branch, told `evidence`. The budget goes on, so the task's gates bound how often a PR sends it back.
   */
  prWork(id: string, reason: string, evidence: string): void {
    this.#transition(id, 'prWork', 'queued', (t) => landing.prWork(t, reason, evidence));
  }

  /**
   * What a verified branch would conflict with, predicted: base (by its name) first, then task ids in backlog
   * order, each with its files and hunks. `conflictsWith` holds the names. No event when nothing changed.
   */
  forecast(id: string, conflicts: ConflictDetail[]): void {
    const task = this.#need(id);
    const names = conflicts.map((c) => c.with);
    if (isDeepStrictEqual(task.conflictsWith ?? [], names) && isDeepStrictEqual(task.conflicts ?? [], conflicts))
      return;
    this.#transition(id, 'forecast', 'verified', (t) => {
      t.conflictsWith = names;
      t.conflicts = conflicts;
    });
  }

  #transition(id: string, name: Transition, to: TaskStatus, change: (t: TaskState) => void, flush = false): void {
    const task = this.#need(id);
    const from = task.status;
    const allowed: readonly TaskStatus[] = FROM[name];
    if (!allowed.includes(from)) throw new IllegalTransitionError(id, name, from, allowed);
    this.#write(
      id,
      (t) => {
        change(t);
        t.status = to;
      },
      flush || from !== to,
    );
    this.#count(id, from, to);
    this.#tell(task, from);
  }

  #write(id: string, change: (t: TaskState) => void, flush = false): TaskState {
    const task = this.#need(id);
    change(task);
    task.updatedAt = this.#now();
    this.#save(id, flush);
    return task;
  }

  #tell(task: TaskState, previousStatus: TaskStatus | null): void {
    if (this.#listeners.size === 0) return;
    const change: TaskChange = { task: structuredClone(task), previousStatus };
    for (const listener of this.#listeners) listener(change);
  }

  #need(id: string): TaskState {
    const task = this.#records[id];
    if (task === undefined) throw new Error(`no state for task ${id}`);
    return task;
  }

  #now(): string {
    return new Date(this.#clock.now()).toISOString();
  }
}
