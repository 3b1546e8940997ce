/**
 * Where an attempt runs when it does not run in the coordinator's process: a job queue between the
 * coordinator (the one writer of task state) and workers (which run the unchanged pipeline).
 *
 * What flows where:
 * - coordinator → worker: an `AttemptJob` (plain JSON; no signal, observer or budget — those stay with the
 *   coordinator), and `ControlMessage`s for a job that runs (the answer to a plan, an abort);
 * - worker → coordinator: `WorkerEvent`s, in order, each delivered at least once and acknowledged by the
 *   coordinator once applied (a stream with acknowledgements, never fire-and-forget), numbered so that a
 *   redelivered event is applied once;
 * - the git remote carries the code: the worker fetches `baseCommit` (and `branchCommit` when set) and
 *   pushes `loop/<id>` after an attempt that produced a commit; the coordinator fetches it back.
 *
 * Invariant: a job id is `<task id>:<attempt>` (`.<rerun>` after an interruption; see jobIdOf), so enqueueing the same attempt twice never
 * runs it twice; a job is run by one worker at a time (a stalled job is taken by another worker only after
 * its lock expired, and the attempt then restarts from the job, its spending so far already booked).
 */
import type { AttemptResult } from '../domain/attempt-result.js';
import type { AgentEvent } from './model.js';
import type { FleetConfig, Phase, Role, TaskSpec } from '../domain/types.js';

export interface AttemptJob {
  jobId: string;
  taskId: string;
  attempt: number;
  /** the remote's URL as the coordinator reaches it; workers fetch from and push to it */
  remoteUrl: string;
  /** the base branch's short name and the commit the attempt starts from (pushed to the remote before the job) */
  base: string;
  baseCommit: string;
  /** `loop/<id>` */
  branch: string;
  /** the branch's commit when the task has one already (a verify-only attempt, a replayed conflict), else null */
  branchCommit: string | null;
  spec: TaskSpec;
  config: FleetConfig;
  verifyOnly: boolean;
  previousPlan: string | null;
  approvedPlan: string | null;
  stopAfterPlan: boolean;
  rebaseFirst: boolean;
  evidence: string | null;
  /** names of host variables the sandboxed environment passes (`env:`); values are the worker's own */
  passedEnv: string[];
  /**
   * The coordinator's decision that setup may run outside the sandbox: the job starts a new branch on a base
   * commit that holds nothing an agent wrote during this run ({@link SetupTrust}). Absent or false: setup
   * runs in the worker's sandbox. Trusted only because the job is sealed with the fleet secret.
   */
  setupOnHost?: boolean;
  /** the task's remaining wall clock when the job was made, ms; null: no limit */
  remainingMs: number | null;
  /** W3C trace context of the attempt's span on the coordinator, so a worker's spans join the task's trace */
  traceparent?: string;
  /**
   * The coordinator's role definitions, each as a role file's text ({@link rolesToWire}), so the
   * repository's `agents/` reach workers; absent: the worker's own. Checked on the worker like any job input.
   */
  roles?: Record<Role, string>;
}

/** An error as it crosses the wire: its class by name, so the coordinator settles it as the local path would. */
export interface WireError {
  kind: 'gate' | 'stop' | 'rate-limit' | 'resource-limit' | 'refused' | 'error';
  message: string;
  /** GateError's gate and scope, RateLimitError's retry time, … as the class needs */
  detail?: Record<string, unknown>;
}

export interface WorkerIdentity {
  /** unique per worker process: host name, pid and a random part */
  id: string;
  host: string;
  concurrency: number;
}

export type WorkerEvent =
  | { kind: 'claimed'; worker: WorkerIdentity }
  | { kind: 'phase'; phase: Phase }
  | { kind: 'agent'; role: Role; model: string; event: AgentEvent }
  | { kind: 'output'; phase: Phase; chunk: string }
  | { kind: 'notice'; message: string; level: 'info' | 'warn' }
  /** the worker waits for a `plan-answer` with the same `request` before it implements */
  | { kind: 'planned'; plan: string; request: string }
  | { kind: 'pushed'; branch: string; commit: string }
  | { kind: 'result'; result: AttemptResult }
  | { kind: 'failed'; error: WireError };

export type ControlMessage =
  | { kind: 'plan-answer'; request: string; blocker: { id: string; files: string[] } | null }
  /** stop the attempt now: a gate tripped on the coordinator, or the fleet stops */
  | { kind: 'abort'; error: WireError };

export interface SequencedEvent {
  /** per job, from 1, gap-free: the coordinator applies each number once */
  seq: number;
  event: WorkerEvent;
}

export interface WorkerInfo {
  identity: WorkerIdentity;
  /** job ids it runs now */
  running: string[];
  /** ISO time of its last heartbeat */
  seenAt: string;
  /** set when the worker refuses jobs (its sandbox self-test failed), with why */
  refusing: string | null;
}

/** The coordinator's side. */
export interface CoordinatorQueue {
  /** idempotent by `job.jobId`: a job that exists (waiting, running or finished) is left as it is */
  enqueue(job: AttemptJob): Promise<void>;
  /**
   * The job's events from the first one not yet acknowledged, in order, redelivered after a reconnect or a
   * coordinator restart until acknowledged; ends after a `result` or `failed` event has been acknowledged.
   */
  events(jobId: string, signal: AbortSignal): AsyncIterable<SequencedEvent>;
  ack(jobId: string, seq: number): Promise<void>;
  send(jobId: string, message: ControlMessage): Promise<void>;
  /** removes a job that no worker has taken; a running one gets an `abort` */
  cancel(jobId: string, error: WireError): Promise<void>;
  /**
   * `live`: the job waits for a worker, runs, or has events not yet acknowledged, and was never cancelled —
   * a coordinator started again follows it rather than running the attempt anew. `ended`: anything else
   * (gone from the queue, failed, cancelled, its final event acknowledged).
   */
  status(jobId: string): Promise<'live' | 'ended'>;
  /** jobs waiting for a worker */
  depth(): Promise<number>;
  workers(): Promise<WorkerInfo[]>;
  close(): Promise<void>;
}

/** What a worker's job handler gets for one job. */
export interface JobChannel {
  emit(event: WorkerEvent): Promise<void>;
  /** control messages for this job, in order */
  messages(signal: AbortSignal): AsyncIterable<ControlMessage>;
}

/** The worker's side. */
export interface WorkerQueue {
  /** takes jobs, at most `concurrency` at once, until close(); a handler that throws hands the job back */
  process(
    identity: WorkerIdentity,
    handler: (job: AttemptJob, channel: JobChannel, signal: AbortSignal) => Promise<void>,
  ): void;
  /** stop taking jobs; with `drain`, wait for running handlers, else abort them (their jobs go back) */
  close(drain: boolean): Promise<void>;
  /** heartbeat details the coordinator sees */
  setRefusing(reason: string | null): Promise<void>;
}

/**
 * `rerun`: how many times this attempt number was interrupted (a fleet stop, a limit) and started again; a
 * rerun is a job of its own (`T-1:2.1`), so the interrupted job, finished or cancelled, never stands in for it.
 */
export function jobIdOf(taskId: string, attempt: number, rerun = 0): string {
  return rerun === 0 ? `${taskId}:${attempt}` : `${taskId}:${attempt}.${rerun}`;
}
