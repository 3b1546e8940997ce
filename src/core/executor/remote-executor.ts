/**
 * Attempts that run on workers: the coordinator's side of the queue. The task runner is unchanged — it
 * gets the same observer calls, in the same order, that the local pipeline makes, and the same result or
 * error class — so the lifecycle stays the one writer of task state and the gates stay the coordinator's.
 *
 * Invariants: each event (by its `seq`) is applied once and acknowledged only after it was applied, so a
 * redelivered event books nothing twice and an unacknowledged one is never lost; an attempt whose signal
 * aborts (a task gate, a fleet gate, a stop) has its job cancelled and rejects with the signal's reason at
 * once, whatever the worker is doing; a plan is answered from `observer.planned` the moment it is applied,
 * so two plans never pass each other here either.
 */
import {
  jobIdOf,
  type AttemptJob,
  type CoordinatorQueue,
  type SequencedEvent,
  type WorkerEvent,
} from '../../ports/attempt-queue.js';
import type { AttemptInput, AttemptResult } from '../attempt/attempt-io.js';
import type { AttemptExecutor } from './attempt-executor.js';
import type { SetupTrust } from '../attempt/setup-trust.js';
import { RemoteBranches, type MadeWorktree, type RemoteBranchDeps } from './remote-branches.js';
import { checkEvent } from './wire-events.js';
import { rolesToWire, type WireRoles } from './wire-roles.js';
import type { RoleDefinition } from '../roles/definitions.js';
import type { Role } from '../../domain/types.js';
import { fromWireError, toWireError } from './wire-error.js';
import { confirmClaim, type CommitChecker } from './claim-check.js';

export interface RemoteExecutorDeps extends RemoteBranchDeps {
  queue: CoordinatorQueue;
  /** the remote's URL as workers reach it (AttemptJob.remoteUrl) */
  remoteUrl: string;
  /** something went wrong outside any attempt (a cancel that failed): said, never thrown */
  warn: (message: string) => void;
  /** the W3C trace context of the attempt's span here, so the worker's spans join the task's trace */
  traceparentOf?: (taskId: string, attempt: number) => string | null;
  /** the coordinator's own check of a branch a worker says is verified, in its own sandbox ({@link confirmClaim}) */
  check: CommitChecker;
  /** the role definitions the coordinator loaded (the repository's `agents/` over the packaged ones), sent with each job */
  roles?: Record<Role, RoleDefinition>;
}

/** Past the largest timer: no time gate. */
const NO_LIMIT = Number.MAX_SAFE_INTEGER;

type Ended = { result: AttemptResult } | { error: Error };

export class RemoteExecutor implements AttemptExecutor {
  readonly #d: RemoteExecutorDeps;
  readonly #branches: RemoteBranches;
  readonly #roles: WireRoles | null;
  /** the fleet's landings: a job vouches for its base only when this says base is the person's */
  #trust: SetupTrust | null = null;

  constructor(deps: RemoteExecutorDeps) {
    this.#d = deps;
    this.#branches = new RemoteBranches(deps);
    this.#roles = deps.roles === undefined ? null : rolesToWire(deps.roles);
  }

  trustSetupWith(trust: SetupTrust): void {
    this.#trust = trust;
  }

  async run(input: AttemptInput): Promise<AttemptResult> {
    const { queue } = this.#d;
    const rerun = input.rerun ?? 0;
    if (input.signal.aborted) throw input.signal.reason;
    // A run of this attempt that was interrupted here without stopping its job (this coordinator was
    // killed): its job still runs or waits, and is followed again rather than replaced.
    const live = rerun > 0 ? await this.#liveRun(input.spec.id, input.attempt, rerun) : null;
    const jobId = live ?? jobIdOf(input.spec.id, input.attempt, rerun);
    // The run this one replaces was interrupted here: should its job still be on a worker, it stops.
    if (live === null && rerun > 0)
      await this.#cancel(jobIdOf(input.spec.id, input.attempt, rerun - 1), new Error('the attempt was started again'));
    const job = live === null ? await this.#publishedJob(jobId, input) : null;
    if (input.signal.aborted) throw input.signal.reason;
    const holder = live === null ? null : await this.#reattached(live, input);

    const following = new AbortController();
    let onAbort = () => {};
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => {
        following.abort();
        void this.#cancel(jobId, input.signal.reason);
        reject(input.signal.reason);
      };
    });
    input.signal.addEventListener('abort', onAbort, { once: true });
    try {
      if (job !== null) await Promise.race([queue.enqueue(job), aborted]);
      const ended = await Promise.race([
        this.#follow(jobId, input, following.signal, live === null ? null : { worker: holder }),
        aborted,
      ]);
      if ('error' in ended) throw ended.error;
      return ended.result;
    } finally {
      input.signal.removeEventListener('abort', onAbort);
      following.abort();
    }
  }

  /** The latest earlier run of attempt `attempt` whose job the queue still holds live, or null. */
  async #liveRun(taskId: string, attempt: number, rerun: number): Promise<string | null> {
    for (let k = rerun - 1; k >= 0; k--) {
      const id = jobIdOf(taskId, attempt, k);
      if ((await this.#d.queue.status(id)) === 'live') return id;
    }
    return null;
  }

  /** Said once, and the worker that holds the job (its `claimed` was applied before the restart) told. */
  async #reattached(jobId: string, input: AttemptInput): Promise<string | null> {
    const holder = (await this.#d.queue.workers()).find((w) => w.running.includes(jobId));
    if (holder !== undefined) input.observer.worker?.(holder.identity.id);
    const where = holder === undefined ? 'no worker runs it now' : `on worker ${holder.identity.id}`;
    input.observer.notice(
      `attempt ${input.attempt} goes on as job ${jobId} (${where}): followed again from its first unacknowledged event`,
      'info',
    );
    return holder?.identity.id ?? null;
  }

  async #publishedJob(jobId: string, input: AttemptInput): Promise<AttemptJob> {
    const published = await this.#branches.publish(input.base, input.branch);
    // The same decision the one-machine setup makes: a new branch on a base that holds nothing landed during
    // this run. Without the fleet's record of landings, nothing is vouched for.
    const onHost =
      published.branchCommit === null &&
      this.#trust !== null &&
      (await this.#trust.landedIn(published.baseCommit)) === null;
    return this.#job(jobId, input, published.baseCommit, published.branchCommit, onHost);
  }

  #job(
    jobId: string,
    input: AttemptInput,
    baseCommit: string,
    branchCommit: string | null,
    setupOnHost: boolean,
  ): AttemptJob {
    const remaining = input.budget.remainingMs();
    const traceparent = this.#d.traceparentOf?.(input.spec.id, input.attempt) ?? null;
    return {
      jobId,
      taskId: input.spec.id,
      attempt: input.attempt,
      remoteUrl: this.#d.remoteUrl,
      base: input.base,
      baseCommit,
      branch: input.branch,
      branchCommit,
      spec: input.spec,
      config: input.config,
      verifyOnly: input.verifyOnly,
      previousPlan: input.previousPlan,
      approvedPlan: input.approvedPlan,
      stopAfterPlan: input.stopAfterPlan,
      rebaseFirst: input.rebaseFirst === true,
      evidence: input.evidence,
      passedEnv: [...(input.config.env ?? [])],
      setupOnHost,
      remainingMs: remaining >= NO_LIMIT ? null : remaining,
      ...(traceparent === null ? {} : { traceparent }),
      ...(this.#roles === null ? {} : { roles: this.#roles }),
    };
  }

  /**
   * The job's events in order until its outcome; each applied once, then acknowledged. `resumed`: a job
   * followed again after a restart (and the worker that holds it), whose events before the first one
   * delivered were applied (and acknowledged) by the coordinator before it.
   */
  async #follow(
    jobId: string,
    input: AttemptInput,
    signal: AbortSignal,
    resumed: { worker: string | null } | null,
  ): Promise<Ended> {
    const seen = {
      applied: 0,
      worker: resumed?.worker ?? null,
      resumed: resumed !== null,
      made: null as MadeWorktree | null,
    };
    for await (const delivered of this.#d.queue.events(jobId, signal)) {
      if (signal.aborted) break;
      const { seq } = delivered;
      if (seen.resumed) {
        seen.resumed = false;
        seen.applied = seq - 1;
      }
      // A redelivery of what was applied already (its acknowledgement was lost): acknowledged again only.
      if (seq <= seen.applied) {
        await this.#d.queue.ack(jobId, seq);
        continue;
      }
      // A gap is an entry the queue dropped (its seal did not hold, or it came from a worker without the
      // job's lock) and named; the order is kept: numbers only rise.
      const ended = await this.#apply(jobId, delivered, input, seen);
      seen.applied = seq;
      await this.#d.queue.ack(jobId, seq);
      if (ended !== null) return ended;
    }
    if (signal.aborted) throw input.signal.reason ?? new Error(`job ${jobId}: stopped following it`);
    throw new Error(`job ${jobId}: its events ended without a result`);
  }

  async #apply(
    jobId: string,
    delivered: SequencedEvent,
    input: AttemptInput,
    seen: { worker: string | null; made: MadeWorktree | null },
  ): Promise<Ended | null> {
    let event: WorkerEvent;
    try {
      event = checkEvent(delivered.event);
    } catch (error) {
      return {
        error: new Error(
          `job ${jobId}: event ${delivered.seq} from the worker is malformed: ${(error as Error).message}`,
        ),
      };
    }
    const { observer } = input;
    switch (event.kind) {
      case 'claimed':
        if (seen.worker !== null) {
          // The job's worker stopped (killed, or it handed the job back) and another took it: the attempt
          // starts over there; what it spent so far stays booked.
          observer.notice(
            `attempt ${input.attempt} restarts on worker ${event.worker.id}: worker ${seen.worker} stopped running it`,
            'warn',
          );
          observer.phase('setup');
        }
        seen.worker = event.worker.id;
        observer.worker?.(event.worker.id);
        return null;
      case 'phase':
        observer.phase(event.phase);
        return null;
      case 'agent':
        observer.agentEvent(event.role, event.model, event.event);
        return null;
      case 'output':
        observer.output(event.phase, event.chunk);
        return null;
      case 'notice':
        observer.notice(event.message, event.level);
        return null;
      case 'planned': {
        const blocker = (await observer.planned?.(event.plan)) ?? null;
        await this.#d.queue.send(jobId, { kind: 'plan-answer', request: event.request, blocker });
        return null;
      }
      case 'pushed':
        if (event.branch !== input.branch)
          return {
            error: new Error(`job ${jobId}: the worker pushed ${event.branch}, not the task's branch ${input.branch}`),
          };
        seen.made =
          (await this.#branches.fetchBack(input.branch, event.commit, {
            repoRoot: input.repoRoot,
            worktree: input.worktree,
            base: input.base,
          })) ?? seen.made;
        return null;
      case 'result':
        // A worker's `verified` holds only once the coordinator's own check of the fetched commit passed.
        return {
          result:
            event.result.outcome === 'verified'
              ? await confirmClaim(this.#d.check, input, event.result, seen.worker, seen.made)
              : event.result,
        };
      case 'failed':
        return { error: fromWireError(event.error) };
    }
  }

  async #cancel(jobId: string, reason: unknown): Promise<void> {
    try {
      await this.#d.queue.cancel(jobId, toWireError(reason));
    } catch (error) {
      this.#d.warn(`job ${jobId} could not be cancelled: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}
