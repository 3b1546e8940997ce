import {
  TASK_STATUSES,
  type AttemptRecord,
  type CostPerTask,
  type Role,
  type TaskStatus,
  type Usage,
} from '../../domain/types.js';
import type { Counter, Histogram, Telemetry } from '../../ports/telemetry.js';
import type { TokenKind } from './attributes.js';

/** The metrics' names and units, as the observability reference lists them. */
export const METRICS = {
  tokens: {
    name: 'loopfleet.tokens',
    unit: '{token}',
    description: 'tokens the models reported, by kind, role and model',
  },
  cost: { name: 'loopfleet.cost', unit: 'USD', description: 'what the models cost, by role and model' },
  attempts: { name: 'loopfleet.attempts', unit: '{attempt}', description: 'finished attempts, by outcome' },
  attemptDuration: {
    name: 'loopfleet.attempt.duration',
    unit: 's',
    description: 'wall clock of a finished attempt, by outcome',
  },
  tasks: { name: 'loopfleet.tasks', unit: '{task}', description: 'tasks by status' },
  queueDepth: {
    name: 'loopfleet.queue.depth',
    unit: '{attempt}',
    description: 'attempts waiting for a pipeline or a worker',
  },
  workers: { name: 'loopfleet.workers', unit: '{worker}', description: 'workers that run attempts (1: this process)' },
  costPerVerified: {
    name: 'loopfleet.cost.per_verified',
    unit: 'USD',
    description: 'what the tasks of the run spent, divided by those that reached verified (merged included)',
  },
  costPerMerged: {
    name: 'loopfleet.cost.per_merged',
    unit: 'USD',
    description: 'what the tasks of the run spent, divided by those merged',
  },
} as const;

const KIND_OF: ReadonlyArray<[keyof Usage, TokenKind]> = [
  ['input', 'input'],
  ['output', 'output'],
  ['cacheWrite', 'cache_write'],
  ['cacheRead', 'cache_read'],
];

export interface GaugeSources {
  counts: () => Record<TaskStatus, number>;
  queueDepth: () => number | Promise<number>;
  workers: () => number | Promise<number>;
  /** the run's tasks in figures ({@link costPerTask}); a figure with nothing to divide by is not reported */
  spending?: () => CostPerTask;
}

/** The fleet's instruments on one telemetry; the gauges are read from `sources` at each collection. */
export class FleetMetrics {
  readonly #tokens: Counter;
  readonly #cost: Counter;
  readonly #attempts: Counter;
  readonly #duration: Histogram;

  constructor(telemetry: Telemetry, sources: GaugeSources) {
    const { tokens, cost, attempts, attemptDuration, tasks, queueDepth, workers } = METRICS;
    this.#tokens = telemetry.counter(tokens.name, tokens);
    this.#cost = telemetry.counter(cost.name, cost);
    this.#attempts = telemetry.counter(attempts.name, attempts);
    this.#duration = telemetry.histogram(attemptDuration.name, attemptDuration);
    telemetry.observableGauge(tasks.name, tasks, () => {
      const counts = sources.counts();
      return TASK_STATUSES.map((status) => ({
        value: counts[status] ?? 0,
        attributes: { 'loopfleet.task.status': status },
      }));
    });
    telemetry.observableGauge(queueDepth.name, queueDepth, async () => [{ value: await sources.queueDepth() }]);
    telemetry.observableGauge(workers.name, workers, async () => [{ value: await sources.workers() }]);
    const spending = sources.spending;
    if (spending !== undefined) {
      const figure = (key: 'costPerVerified' | 'costPerMerged') => () => {
        const value = spending()[key];
        return value === null ? [] : [{ value }];
      };
      telemetry.observableGauge(METRICS.costPerVerified.name, METRICS.costPerVerified, figure('costPerVerified'));
      telemetry.observableGauge(METRICS.costPerMerged.name, METRICS.costPerMerged, figure('costPerMerged'));
    }
  }

  /** one usage report: each kind of token it holds, and its cost */
  usage(role: Role, model: string, delta: Usage, costUsd: number): void {
    for (const [field, kind] of KIND_OF) {
      if (delta[field] > 0)
        this.#tokens.add(delta[field], {
          'loopfleet.token.kind': kind,
          'loopfleet.role': role,
          'loopfleet.model': model,
        });
    }
    if (costUsd > 0) this.#cost.add(costUsd, { 'loopfleet.role': role, 'loopfleet.model': model });
  }

  /** a finished attempt, counted once by the caller */
  attempt(record: AttemptRecord): void {
    const attributes = { 'loopfleet.attempt.outcome': record.outcome };
    this.#attempts.add(1, attributes);
    if (record.endedAt !== null) {
      const seconds = (Date.parse(record.endedAt) - Date.parse(record.startedAt)) / 1000;
      if (Number.isFinite(seconds) && seconds >= 0) this.#duration.record(seconds, attributes);
    }
  }
}
