import type { FleetEmitter, FleetEvents } from '../task/events.js';
import {
  addUsage,
  costPerTask,
  totalTokens,
  ZERO_USAGE,
  type AttemptRecord,
  type Phase,
  type TaskState,
  type TaskStatus,
  type Usage,
} from '../../domain/types.js';
import { systemClock, type Clock } from '../../ports/clock.js';
import type { Span, Telemetry } from '../../ports/telemetry.js';
import { allowListed, type AllowedAttributes } from './attributes.js';
import { FleetMetrics } from './metrics.js';

/**
 * The fleet's events as traces and metrics. A trace per task (root span `task <id>`), a child span per
 * attempt (`attempt <n>`), and under it a span per phase (`phase setup|explore|implement|verify`); the
 * metrics of {@link FleetMetrics}. Everything goes through the allow-list ({@link ATTRIBUTE_RULES}).
 *
 * Invariants: a span ends once; an attempt is counted once, when its record gets its end; the task span
 * ends when the task settles (verified, failed, conflict, merged, discarded) or when the recorder closes, and a
 * task that runs again later in the run starts a new trace.
 */
export interface RecorderOptions {
  counts: () => Record<TaskStatus, number>;
  /** attempts waiting; default: the fleet's queued tasks */
  queueDepth?: () => number | Promise<number>;
  /** workers running attempts; default 1 (this process) */
  workers?: () => number | Promise<number>;
  /**
   * false on a coordinator whose attempts run on workers: the workers record the phase spans
   * ({@link workerAttemptSpans})
   */
  phaseSpans?: boolean;
  /**
   * Every span's start and end, from one clock: a span that ends with its parent gets the same end time, so
   * a child always lies within its parent (the SDK's own times mix a millisecond clock and a monotonic one).
   */
  clock?: Clock;
}

const SETTLED: ReadonlySet<TaskStatus> = new Set(['verified', 'failed', 'conflict', 'merged', 'discarded']);
const SUCCESS = new Set(['verified', 'unchanged']);

interface Open {
  task: Span;
  attempt: { n: number; span: Span; worker: string | null } | null;
  phase: { name: Phase; span: Span } | null;
  last: TaskState;
}

function usageOf(record: AttemptRecord): Usage {
  return Object.values(record.usageByRole).reduce<Usage>((sum, u) => addUsage(sum, u ?? ZERO_USAGE), { ...ZERO_USAGE });
}

export class FleetTelemetry {
  readonly #telemetry: Telemetry;
  readonly #metrics: FleetMetrics;
  readonly #phaseSpans: boolean;
  readonly #clock: Clock;
  readonly #open = new Map<string, Open>();
  /** the last status and cost of every task the run reported, for the cost-per-task gauges */
  readonly #seen = new Map<string, { status: TaskStatus; costUsd: number }>();
  /** `<id>:<n>` of every attempt counted: a record seen again in a later event is not counted twice */
  readonly #counted = new Set<string>();
  readonly #unsubscribe: () => void;

  constructor(telemetry: Telemetry, events: FleetEmitter, options: RecorderOptions) {
    this.#telemetry = allowListed(telemetry);
    this.#phaseSpans = options.phaseSpans ?? true;
    this.#clock = options.clock ?? systemClock;
    this.#metrics = new FleetMetrics(this.#telemetry, {
      counts: options.counts,
      queueDepth: options.queueDepth ?? (() => options.counts().queued),
      workers: options.workers ?? (() => 1),
      spending: () => costPerTask([...this.#seen.values()]),
    });
    const onTask = (e: FleetEvents['task'][0]) => this.#onTask(e.task);
    const onUsage = (u: FleetEvents['usage'][0]) => this.#metrics.usage(u.role, u.model, u.delta, u.costUsd);
    events.on('task', onTask);
    events.on('usage', onUsage);
    this.#unsubscribe = () => {
      events.off('task', onTask);
      events.off('usage', onUsage);
    };
  }

  /** W3C traceparent of a running attempt's span, for the job that runs it on a worker; null when none is open */
  attemptTraceparent(taskId: string, attempt: number): string | null {
    const open = this.#open.get(taskId)?.attempt;
    return open?.n === attempt ? open.span.traceparent() : null;
  }

  /** the worker that took an attempt's job (its `claimed` event): an attribute of the attempt's span */
  attemptOnWorker(taskId: string, attempt: number, workerId: string): void {
    const open = this.#open.get(taskId)?.attempt;
    if (open?.n !== attempt) return;
    open.worker = workerId;
    open.span.setAttributes({ 'loopfleet.worker.id': workerId } satisfies AllowedAttributes);
  }

  /** ends every open span as it stands (an interrupted attempt says so) and stops listening; the caller flushes */
  close(): void {
    this.#unsubscribe();
    const now = this.#clock.now();
    for (const [id, open] of this.#open) this.#endTask(id, open, open.last, now);
  }

  #onTask(task: TaskState): void {
    this.#seen.set(task.id, { status: task.status, costUsd: task.costUsd });
    const now = this.#clock.now();
    let open = this.#open.get(task.id);
    if (open === undefined) {
      // a task seen first outside `running` (settled in an earlier run, or waiting) has nothing to trace yet
      if (task.status !== 'running') return;
      const attributes = { 'loopfleet.task.id': task.id } satisfies AllowedAttributes;
      open = {
        task: this.#telemetry.startSpan(`task ${task.id}`, { attributes, startTimeMs: now }),
        attempt: null,
        phase: null,
        last: task,
      };
      this.#open.set(task.id, open);
    }
    open.last = task;
    const record = task.attempts.find((a) => a.n === task.attempt);
    if (
      task.status === 'running' &&
      record !== undefined &&
      record.endedAt === null &&
      open.attempt?.n !== task.attempt
    ) {
      this.#endAttempt(task.id, open, null, now);
      const attributes = {
        'loopfleet.task.id': task.id,
        'loopfleet.attempt': task.attempt,
        'loopfleet.attempt.verify_only': task.verifyOnly,
      } satisfies AllowedAttributes;
      open.attempt = {
        n: task.attempt,
        span: this.#telemetry.startSpan(`attempt ${task.attempt}`, { parent: open.task, attributes, startTimeMs: now }),
        worker: null,
      };
    }
    // the worker that runs the attempt, once the queue's executor has it on the task (absent without a queue)
    const worker = (task as TaskState & { worker?: string }).worker;
    if (open.attempt !== null && worker !== undefined && open.attempt.worker !== worker)
      this.attemptOnWorker(task.id, open.attempt.n, worker);
    if (
      this.#phaseSpans &&
      open.attempt !== null &&
      task.status === 'running' &&
      task.phase !== null &&
      open.phase?.name !== task.phase &&
      record?.endedAt === null
    ) {
      this.#endPhase(open, 'ok', now);
      const attributes = {
        'loopfleet.task.id': task.id,
        'loopfleet.attempt': open.attempt.n,
        'loopfleet.phase': task.phase,
      } satisfies AllowedAttributes;
      open.phase = {
        name: task.phase,
        span: this.#telemetry.startSpan(`phase ${task.phase}`, {
          parent: open.attempt.span,
          attributes,
          startTimeMs: now,
        }),
      };
    }
    if (task.status !== 'running') this.#endPhase(open, 'ok', now);
    if (open.attempt !== null) {
      const mine = task.attempts.find((a) => a.n === open.attempt?.n);
      if (mine !== undefined && mine.endedAt !== null) this.#endAttempt(task.id, open, mine, now);
    }
    if (SETTLED.has(task.status)) this.#endTask(task.id, open, task, now);
  }

  #endPhase(open: Open, status: 'ok' | 'error', at: number): void {
    if (open.phase === null) return;
    open.phase.span.setStatus(status);
    open.phase.span.end(at);
    open.phase = null;
  }

  /** `record`: the attempt's record once it ended; null when the attempt is cut short (a new one, the end of the run) */
  #endAttempt(id: string, open: Open, record: AttemptRecord | null, at: number): void {
    const attempt = open.attempt;
    if (attempt === null) return;
    const outcome = record?.outcome ?? 'interrupted';
    const failed = !SUCCESS.has(outcome);
    this.#endPhase(open, failed ? 'error' : 'ok', at);
    const usage = record === null ? ZERO_USAGE : usageOf(record);
    attempt.span.setAttributes({
      'loopfleet.attempt.outcome': outcome,
      'loopfleet.tokens': totalTokens(usage),
      'loopfleet.tokens.input': usage.input,
      'loopfleet.tokens.output': usage.output,
      'loopfleet.tokens.cache_write': usage.cacheWrite,
      'loopfleet.tokens.cache_read': usage.cacheRead,
      'loopfleet.cost_usd': record?.costUsd ?? 0,
    } satisfies AllowedAttributes);
    attempt.span.setStatus(failed ? 'error' : 'ok');
    attempt.span.end(at);
    open.attempt = null;
    const key = `${id}:${attempt.n}`;
    if (record !== null && !this.#counted.has(key)) {
      this.#counted.add(key);
      this.#metrics.attempt(record);
    }
  }

  #endTask(id: string, open: Open, task: TaskState, at: number): void {
    const record = task.attempts.find((a) => a.n === open.attempt?.n);
    this.#endAttempt(id, open, record?.endedAt === null || record === undefined ? null : record, at);
    this.#endPhase(open, 'ok', at);
    open.task.setAttributes({
      'loopfleet.task.status': task.status,
      'loopfleet.attempt': task.attempt,
      'loopfleet.tokens': totalTokens(task.usage),
      'loopfleet.cost_usd': task.costUsd,
      ...(task.gate === null ? {} : { 'loopfleet.gate': task.gate }),
    } satisfies AllowedAttributes);
    open.task.setStatus(task.status === 'failed' || task.status === 'conflict' ? 'error' : 'ok');
    open.task.end(at);
    this.#open.delete(id);
  }
}

/** The fleet's telemetry, or nothing at all when it is the no-op (no listener is added). */
export function recordFleet(
  telemetry: Telemetry,
  events: FleetEmitter,
  options: RecorderOptions,
): FleetTelemetry | null {
  return telemetry.enabled ? new FleetTelemetry(telemetry, events, options) : null;
}
