import { GateError } from '../../domain/errors.js';
import { MAX_TIMER_MS } from '../../domain/layout.js';
import { withoutQuotes } from '../text/untrusted.js';
import { formatDuration, formatLimitDuration, formatTokens, formatUsd } from '../text/format-units.js';
import {
  ZERO_USAGE,
  addUsage,
  totalTokens,
  type AttemptRecord,
  type FleetConfig,
  type FleetGates,
  type FleetTotals,
  type TaskGates,
  type TaskSpec,
  type TaskState,
  type Usage,
} from '../../domain/types.js';

/**
 * Every gate decision of the engine: attempts, tokens, cost, wall clock and no progress per task; tokens,
 * cost and wall clock per fleet. The budgets are asked before each model call and after each usage report
 * (a trip during a call aborts it); a trip is a GateError naming the gate and the reason. No other module
 * decides a gate.
 */

/** `token gate: 1.2M tokens used, limit 1M`: what was used against the limit, in the words of the fleet bar. */
function tokensWords(scope: string, used: number, limit: number): string {
  return `${scope}token gate: ${formatTokens(used)} tokens used, limit ${formatTokens(limit)}`;
}

function costWords(scope: string, spent: number, limit: number): string {
  return `${scope}cost gate: ${formatUsd(spent)} spent, limit ${formatUsd(limit)}`;
}

function timeWords(scope: string, ran: number, limit: number): string {
  return `${scope}time gate: ran ${formatDuration(ran)}, limit ${formatLimitDuration(limit)}`;
}

/** A task's limits: its own fields over the front matter's. */
export function taskGates(spec: TaskSpec, config: FleetConfig): TaskGates {
  return {
    attempts: spec.attempts ?? config.gates.attempts,
    tokens: spec.tokens ?? config.gates.tokens,
    timeMs: spec.timeMs ?? config.gates.timeMs,
    costUsd: spec.costUsd ?? config.gates.costUsd,
  };
}

/**
 * Tokens, cost and wall clock of one task since its budget started (its first run or its last retry).
 * `elapsedMs` is the task's whole running time; the budget's share is subtracted here.
 */
export function checkTaskGates(task: Readonly<TaskState>, gates: TaskGates, elapsedMs: number): GateError | null {
  const tokens = totalTokens(task.usage) - totalTokens(task.budget.usage);
  const cost = task.costUsd - task.budget.costUsd;
  elapsedMs -= task.budget.elapsedMs;
  if (gates.tokens !== null && tokens >= gates.tokens) {
    return new GateError('tokens', 'task', tokensWords('', tokens, gates.tokens));
  }
  if (gates.costUsd !== null && cost >= gates.costUsd) {
    return new GateError('cost', 'task', costWords('', cost, gates.costUsd));
  }
  if (gates.timeMs !== null && elapsedMs >= gates.timeMs) {
    return new GateError('time', 'task', timeWords('', elapsedMs, gates.timeMs));
  }
  return null;
}

export function checkFleetGates(
  fleet: Pick<FleetTotals, 'usage' | 'costUsd'>,
  gates: FleetGates,
  elapsedMs: number,
): GateError | null {
  const tokens = totalTokens(fleet.usage);
  if (gates.tokens !== null && tokens >= gates.tokens) {
    return new GateError('fleet_tokens', 'fleet', tokensWords('fleet ', tokens, gates.tokens));
  }
  if (gates.costUsd !== null && fleet.costUsd >= gates.costUsd) {
    return new GateError('fleet_cost', 'fleet', costWords('fleet ', fleet.costUsd, gates.costUsd));
  }
  if (gates.timeMs !== null && elapsedMs >= gates.timeMs) {
    return new GateError('fleet_time', 'fleet', timeWords('fleet ', elapsedMs, gates.timeMs));
  }
  return null;
}

/**
 * How an attempt failed, comparable with another: the no-progress gate fails a task whose two last attempts
 * failed the same way. `key` is what is kept in the state file (AttemptRecord.fingerprint); `failingTests`,
 * when the check reports it, lets an attempt that reduced the count of failing tests count as progress even
 * when the wording is the same.
 */
export interface FailureSignature {
  key: string;
  failingTests: number | null;
}

/**
 * A failure's signature. Digits are blanked so timings and counters in output do not hide a repeat.
 */
export function failureSignature(
  outcome: string,
  evidence: string,
  failingTests: number | null = null,
): FailureSignature {
  return { key: failureFingerprint(outcome, evidence), failingTests };
}

/** An attempt that stopped with an error: the message as it is is its signature. */
export function errorSignature(message: string): FailureSignature {
  return { key: `error:${message}`, failingTests: null };
}

/** The key of a failure's signature (see failureSignature). */
export function failureFingerprint(outcome: string, evidence: string): string {
  // Test counts (the line of `countsMarker`) are kept: 9 failing then 1 failing is progress, not a repeat.
  // Only loopfleet's own marker lines count, not look-alikes inside the quoted check output.
  const counts = [...withoutQuotes(evidence).matchAll(/^Failing tests: (\d+) of (\d+)$/gm)]
    .map((m) => `failing=${m[1]}/${m[2]} `)
    .join('');
  return `${outcome}:${counts}${evidence
    .replace(/\d+(\.\d+)?/g, '#')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(-2000)}`;
}

/** `later` failed the same way as `earlier`: same key, and not fewer failing tests when both know the count. */
export function sameFailure(earlier: FailureSignature, later: FailureSignature): boolean {
  if (earlier.key !== later.key) return false;
  if (earlier.failingTests !== null && later.failingTests !== null && later.failingTests < earlier.failingTests)
    return false;
  return true;
}

function signatureOf(attempt: Readonly<AttemptRecord>): FailureSignature | null {
  if (attempt.fingerprint === null) return null;
  const counted = (attempt as { failingTests?: number | null }).failingTests;
  return { key: attempt.fingerprint, failingTests: counted ?? null };
}

/**
 * One task's budget: its attempts, tokens, cost, wall clock and progress, counted since its budget started
 * (the first run, or the last retry — a retry gives fresh ones). It reads the task's record, which usage
 * reports and the running clock keep up to date, so it survives restarts.
 */
export class TaskBudget {
  readonly gates: TaskGates;

  constructor(gates: TaskGates) {
    this.gates = gates;
  }

  /**
   * Attempts of this budget that ended (an interrupted one restarts, so it does not count). A best-of-N
   * round counts each of its candidates that ran to an end: N implementers are N attempts.
   */
  attemptsUsed(task: Readonly<TaskState>): number {
    const ran = (a: Readonly<AttemptRecord>) => a.candidates?.filter((c) => c.outcome !== 'interrupted').length ?? 1;
    return this.#ended(task).reduce((sum, a) => sum + Math.max(1, ran(a)), 0);
  }

  /** Attempt records of this budget that ended, a best-of-N round counting once: the next record's number. */
  roundsUsed(task: Readonly<TaskState>): number {
    return this.#ended(task).length;
  }

  /** How many candidates the next round may run: `parallel`, or fewer when the attempts gate leaves fewer. */
  candidatesLeft(task: Readonly<TaskState>, parallel: number): number {
    return Math.max(0, Math.min(parallel, this.gates.attempts - this.attemptsUsed(task)));
  }

  #ended(task: Readonly<TaskState>): Readonly<AttemptRecord>[] {
    return task.attempts.filter((a) => a.n > task.budget.fromAttempt && a.outcome !== 'interrupted');
  }

  /** Before an attempt starts: the attempts gate, then tokens, cost and time. */
  beforeAttempt(task: Readonly<TaskState>): GateError | null {
    const used = this.attemptsUsed(task);
    if (used >= this.gates.attempts) {
      return new GateError('attempts', 'task', `attempts gate: ${used} of ${this.gates.attempts} attempts failed`);
    }
    return this.check(task);
  }

  /** Tokens, cost and time as the record has them now. */
  check(task: Readonly<TaskState>): GateError | null {
    return checkTaskGates(task, this.gates, task.elapsedMs);
  }

  /** Wall clock left to the task when its running time is `elapsedMs` (very large when it has no time gate). */
  remainingMs(task: Readonly<TaskState>, elapsedMs: number): number {
    if (this.gates.timeMs === null) return Number.MAX_SAFE_INTEGER;
    return Math.max(1, this.gates.timeMs - (elapsedMs - task.budget.elapsedMs));
  }

  /**
   * Arms the time gate for an attempt starting now: `onTrip` gets the gate when the task's time runs out
   * mid-attempt. Returns the disarm function (call it when the attempt ends).
   */
  armTimer(task: Readonly<TaskState>, onTrip: (gate: GateError) => void): () => void {
    const limit = this.gates.timeMs;
    if (limit === null) return () => undefined;
    const left = limit - (task.elapsedMs - task.budget.elapsedMs);
    const timer = setTimeout(
      () => {
        onTrip(new GateError('time', 'task', timeWords('', limit, limit)));
      },
      Math.min(Math.max(0, left), MAX_TIMER_MS),
    );
    timer.unref();
    return () => clearTimeout(timer);
  }

  /**
   * The no-progress gate, asked after a failed attempt whose signature the record holds: the same failure
   * twice in a row fails the task. It exists to save the attempts that are left, so when none are left the
   * attempts gate is the one that speaks.
   */
  noProgress(task: Readonly<TaskState>): GateError | null {
    const done = task.attempts.filter(
      (a) => a.n > task.budget.fromAttempt && a.outcome !== 'interrupted' && a.outcome !== 'running',
    );
    const last = done.at(-1);
    const previous = done.at(-2);
    if (last === undefined || previous === undefined || done.length >= this.gates.attempts) return null;
    const a = signatureOf(previous);
    const b = signatureOf(last);
    if (a === null || b === null || !sameFailure(a, b)) return null;
    return new GateError(
      'no-progress',
      'task',
      `no progress: attempts ${previous.n} and ${last.n} failed the same way (${last.reason ?? last.outcome})`,
    );
  }
}

/**
 * The fleet's budget for this run: tokens, cost and wall clock since start() — a new night starts with a fresh
 * budget. Fed by every usage report (spend). The first trip is latched and handed to `onTrip` once (the fleet
 * stops); later checks return the same gate.
 */
export class FleetBudget {
  readonly #gates: () => FleetGates;
  readonly #now: () => number;
  readonly #onTrip: (gate: GateError) => void;
  #startedAt: number | null = null;
  #usage: Usage = { ...ZERO_USAGE };
  #costUsd = 0;
  #tripped: GateError | null = null;
  #timer: NodeJS.Timeout | null = null;

  /** `gates` is read at each check: the front matter may change while the fleet runs. */
  constructor(gates: () => FleetGates, now: () => number, onTrip: (gate: GateError) => void) {
    this.#gates = gates;
    this.#now = now;
    this.#onTrip = onTrip;
  }

  /** The run starts: the clock runs from now, and the time gate fires by itself when it is reached. */
  start(): void {
    this.#startedAt = this.#now();
    this.#arm();
  }

  /**
   * One timer for the time gate. It re-arms when it finds the limit not reached yet: a timer may fire a
   * millisecond before the wall clock says the time is up, and must not then leave the gate unwatched.
   */
  #arm(): void {
    const limit = this.#gates().timeMs;
    if (limit === null || this.#tripped !== null) return;
    const left = limit - this.elapsedMs();
    this.#timer = setTimeout(
      () => {
        this.#timer = null;
        if (this.check() === null) this.#arm();
      },
      Math.min(Math.max(1, left), MAX_TIMER_MS),
    );
    this.#timer.unref();
  }

  /** Stop the clock's timer (the fleet stopped). */
  dispose(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
  }

  get usage(): Usage {
    return { ...this.#usage };
  }

  get costUsd(): number {
    return this.#costUsd;
  }

  get startedAt(): number | null {
    return this.#startedAt;
  }

  elapsedMs(): number {
    return this.#startedAt === null ? 0 : this.#now() - this.#startedAt;
  }

  get tripped(): GateError | null {
    return this.#tripped;
  }

  /** One usage report of this run. */
  spend(delta: Usage, costUsd: number): void {
    this.#usage = addUsage(this.#usage, delta);
    this.#costUsd += costUsd;
  }

  /** The gate that has tripped, if any; the first trip is reported to `onTrip` once. */
  check(): GateError | null {
    if (this.#tripped !== null) return this.#tripped;
    const tripped = checkFleetGates({ usage: this.#usage, costUsd: this.#costUsd }, this.#gates(), this.elapsedMs());
    if (tripped === null) return null;
    this.#tripped = tripped;
    this.dispose();
    this.#onTrip(tripped);
    return tripped;
  }
}
