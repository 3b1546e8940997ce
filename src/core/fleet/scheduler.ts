import PQueue from 'p-queue';
import type { Clock } from '../../ports/clock.js';
import { MAX_TIMER_MS } from '../../domain/layout.js';
import type { TaskSpec } from '../../domain/types.js';
import type { FleetEmitter } from '../task/events.js';
import { plannedFiles, type Claim } from '../roles/plan-files.js';
import type { FleetState } from '../task/state.js';
import { allowedFrom } from '../task/transitions.js';
import type { ReviewLoad } from '../task/review-load.js';

/**
 * Which queued task starts when, over one p-queue. Invariants:
 * - an id is in `#scheduled` from the moment it is enqueued until its job has settled, and is never enqueued
 *   again meanwhile;
 * - tasks start in backlog order (the queue's priority), once every `after:` task is merged, not before
 *   their `nextRunAt`, and not while the task they wait for (overlapping plans) is still in play;
 * - one timer stands for the earliest recurring task still waiting; it never keeps the process alive;
 * - nothing queued, running or scheduled is idle: every whenIdle() waiter is resolved then; work started
 *   with {@link Scheduler.alongside} (a merge queue resumed at start) counts as running until it ends;
 * - under `review_capacity:` a task that needs a person starts only while the tasks running or waiting for a
 *   person number fewer than the capacity; a pass that holds one back says so ({@link SchedulerServices.paced}),
 *   and the next pass — after a person's merge, discard, approval or a sync's review — starts it. No timer.
 */

export interface SchedulerServices {
  clock: Clock;
  events: FleetEmitter;
  /** aborted when the fleet stops */
  stop: AbortSignal;
  /** the fleet's state (read only once the fleet is opened) */
  state: () => FleetState;
  /** the backlog as it is now: the specs by id, and their ids in backlog order */
  backlog: () => { specs: ReadonlyMap<string, TaskSpec>; order: readonly string[] };
  /** whether queued tasks may start: the fleet started, is not stopping, and BACKLOG.md is there */
  open: () => boolean;
  /** runs one queued task through its attempt (and lands it when its autonomy says so) */
  run: (spec: TaskSpec) => Promise<void>;
  /** a task was enqueued (true), or nothing runs and nothing more can start (false) */
  busy: (busy: boolean) => void;
  /** the load against `review_capacity:` (`inFlight`: enqueued to run); null without a cap */
  review: (inFlight: (id: string) => boolean) => ReviewLoad | null;
  /** how many of the `concurrency` slots the task takes: its best-of-N candidates (`parallel:`), else 1 */
  slots: (spec: TaskSpec) => number;
  /** whether the task lands only through a person, so it counts against the capacity */
  needsPerson: (spec: TaskSpec) => boolean;
  /** after each pass of an open fleet: the load, and whether the capacity held back a task that could start */
  paced: (load: ReviewLoad | null, held: boolean) => void;
}

export class Scheduler {
  readonly #s: SchedulerServices;
  readonly #queue: PQueue;
  #scheduled = new Set<string>();
  /** the slots each scheduled task holds (see {@link SchedulerServices.slots}) */
  readonly #slots = new Map<string, number>();
  /** wakes the scheduler when the earliest waiting recurring task is due */
  #recurTimer: NodeJS.Timeout | null = null;
  #idleWaiters: Array<() => void> = [];
  /** pieces of work outside the task queue that the fleet is not idle during */
  #alongside = 0;

  constructor(services: SchedulerServices, concurrency: number) {
    this.#s = services;
    this.#queue = new PQueue({ concurrency, autoStart: false });
  }

  set concurrency(n: number) {
    const raised = n > this.#queue.concurrency;
    this.#queue.concurrency = n;
    // Only as many jobs are enqueued as there is room for: more room must be filled. After the caller's
    // own step (a limit lifted inside an agent's event), not in the middle of it.
    if (raised) queueMicrotask(() => this.schedule());
  }

  start(): void {
    this.#queue.start();
  }

  /** No new job starts; running ones go on. */
  pause(): void {
    this.#queue.pause();
  }

  /**
   * Work besides the tasks' jobs that the fleet is busy with until it ends (the merge queue a run before left
   * unfinished); a failure is logged, never thrown.
   */
  alongside(what: string, work: () => Promise<void>): void {
    this.#alongside++;
    this.#s.busy(true);
    void work()
      .catch((error: unknown) =>
        this.#s.events.emit('log', {
          level: 'error',
          message: `${what}: ${error instanceof Error ? error.message : String(error)}`,
        }),
      )
      .finally(() => {
        this.#alongside--;
        this.schedule();
      });
  }

  /** The fleet stops: the jobs still waiting are dropped (their tasks stay queued for the next run). */
  halt(): void {
    this.#queue.pause();
    this.#queue.clear();
  }

  /** Resolves when no job runs any more. */
  settled(): Promise<void> {
    return this.#queue.onIdle();
  }

  dispose(): void {
    if (this.#recurTimer !== null) clearTimeout(this.#recurTimer);
  }

  /** A queued task the backlog dropped: its job (if any) finds no spec and ends without running. */
  forget(id: string): void {
    this.#scheduled.delete(id);
    this.#slots.delete(id);
  }

  /** Resolves when nothing is running and nothing more can start. */
  whenIdle(): Promise<void> {
    if (this.#isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /**
   * Enqueue the queued tasks whose `after:` tasks are merged, in backlog order (priority) — only as many as
   * the queue has room for: each job's end schedules again, so a free slot is never left idle, and a backlog
   * of thousands costs one scan per change instead of thousands of sorted insertions into the queue.
   */
  schedule(): void {
    if (!this.#s.open()) {
      this.#resolveIdle();
      return;
    }
    const state = this.#s.state();
    const { specs, order } = this.#s.backlog();
    const now = this.#s.clock.now();
    let wake = Infinity;
    let room = this.#queue.concurrency - [...this.#slots.values()].reduce((sum, n) => sum + n, 0);
    /** a best-of-N task that does not fit yet: tasks after it wait too, so it is never passed over for good */
    let blocked = false;
    const review = this.#s.review((id) => this.#scheduled.has(id));
    let held = false;
    order.forEach((id, index) => {
      const task = state.get(id);
      const spec = specs.get(id);
      if (task === undefined || spec === undefined || task.status !== 'queued' || this.#scheduled.has(id)) return;
      const due = task.nextRunAt == null ? now : Date.parse(task.nextRunAt);
      if (due > now) {
        wake = Math.min(wake, due);
        return;
      }
      if (!spec.after.every((dep) => state.get(dep)?.status === 'merged')) return;
      // A split task waits until every one of its parts has landed.
      if (!(task.parts ?? []).every((part) => state.get(part)?.status === 'merged')) return;
      // Waiting for an overlapping task until it is merged, discarded or failed.
      const blocker = task.waitingFor?.id;
      if (blocker !== undefined && !['merged', 'discarded', 'failed', undefined].includes(state.get(blocker)?.status))
        return;
      // A task wanting more slots than `concurrency` takes them all, once nothing else runs.
      const slots = Math.min(Math.max(1, this.#s.slots(spec)), this.#queue.concurrency);
      if (blocked || room < slots) {
        blocked ||= room > 0;
        return;
      }
      if (review !== null && this.#s.needsPerson(spec)) {
        // At the cap: it starts once a person has merged, discarded, approved or reviewed something.
        if (review.running + review.waiting >= review.capacity) {
          held = true;
          return;
        }
        review.running++;
      }
      room -= slots;
      this.#s.busy(true);
      this.#slots.set(id, slots);
      this.#enqueue(id, -index);
    });
    this.#s.paced(review, held);
    this.#wakeAt(wake);
    this.#resolveIdle();
  }

  /**
   * A recurring task that was merged or discarded waits for its next run. After the transition's own
   * listeners have seen it: the task event for `merged` comes before the one for `queued`.
   */
  recur(id: string): void {
    const spec = this.#s.backlog().specs.get(id);
    // An item a person ticked `[x]` has stopped recurring.
    if (spec?.everyMs === undefined || spec.done) return;
    const everyMs = spec.everyMs;
    queueMicrotask(() => {
      const state = this.#s.state();
      const status = state.get(id)?.status;
      if (status !== 'merged' && status !== 'discarded') return;
      state.lifecycle.reschedule(id, everyMs, status);
      this.schedule();
    });
  }

  /**
   * What the other tasks plan to change, for a task about to implement: a running task's plan once its
   * explorer wrote it, and the last plan of a task whose branch is not on base yet (verified, in conflict,
   * awaiting approval). Queued tasks claim nothing: they are not changing anything now.
   */
  claims(id: string): Claim[] {
    const state = this.#s.state();
    const claims: Claim[] = [];
    for (const other of this.#s.backlog().order) {
      const t = state.get(other);
      if (other === id || t === undefined) continue;
      const plan =
        t.status === 'running'
          ? (t.currentPlan ?? null)
          : t.status === 'verified' || t.status === 'conflict' || t.status === 'awaiting-approval'
            ? (t.approvedPlan ?? t.attempts.findLast((a) => a.plan !== null)?.plan ?? null)
            : null;
      const files = plan === null ? null : plannedFiles(plan);
      if (files !== null && files.length > 0) claims.push({ id: other, files });
    }
    return claims;
  }

  /** One timer for the earliest recurring task still waiting; it does not keep the process alive. */
  #wakeAt(at: number): void {
    if (this.#recurTimer !== null) clearTimeout(this.#recurTimer);
    this.#recurTimer = null;
    if (at === Infinity) return;
    this.#recurTimer = setTimeout(
      () => {
        this.#recurTimer = null;
        this.schedule();
      },
      Math.min(Math.max(0, at - this.#s.clock.now()), MAX_TIMER_MS),
    );
    this.#recurTimer.unref();
  }

  #enqueue(id: string, priority = 0): void {
    this.#scheduled.add(id);
    void this.#queue
      .add(
        async () => {
          const spec = this.#s.backlog().specs.get(id);
          const task = this.#s.state().get(id);
          // The backlog may have dropped it, or a person discarded it, while it waited.
          if (spec === undefined || task === undefined || task.status !== 'queued') return;
          // Enqueued before the backlog went (or the fleet stopped): it stays queued for when it may start.
          if (!this.#s.open()) return;
          await this.#s.run(spec);
        },
        { priority },
      )
      .catch((error: unknown) => {
        // halt() clears the queue: the tasks that were waiting stay queued for the next run.
        if (this.#s.stop.aborted && error instanceof Error && error.name === 'AbortError') return;
        this.#s.events.emit('log', {
          level: 'error',
          id,
          message: `internal error running ${id}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
        });
        const state = this.#s.state();
        const status = state.get(id)?.status;
        if (status !== undefined && allowedFrom('fail').includes(status)) {
          state.lifecycle.fail(id, {
            gate: null,
            reason: `internal error: ${error instanceof Error ? error.message : String(error)}`,
          });
        }
      })
      .finally(() => {
        this.#scheduled.delete(id);
        this.#slots.delete(id);
        this.schedule();
      });
  }

  #isIdle(): boolean {
    return this.#queue.size === 0 && this.#queue.pending === 0 && this.#scheduled.size === 0 && this.#alongside === 0;
  }

  /** Nothing running and nothing startable: the fleet is idle (it still picks up new work) until more comes. */
  #resolveIdle(): void {
    if (!this.#isIdle()) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const resolve of waiters) resolve();
    this.#s.busy(false);
  }
}
