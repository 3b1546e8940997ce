/**
 * The worker's side of an attempt: one job, run by the worker's own pipeline on its cache repository
 * exactly as the coordinator's would run it, reported as events.
 *
 * Invariants: events are emitted in the order the pipeline reports them, each emit awaited before the next;
 * a job handed back (the worker's signal aborted: it stops, or lost the job) emits nothing more and throws,
 * so the queue gives the job to another worker; `loop/<id>` is pushed only with the lease the job names
 * (another worker's push makes it fail, never forced), and only before the `result` it belongs to — except
 * that a push of this same attempt that landed before its worker died (the remote's branch starts where the
 * job starts and records the same tree) is adopted rather than failed; a job the worker's
 * {@link WorkerPolicy} refuses is failed before anything is fetched.
 */
import type { AttemptJob, JobChannel, WireError, WorkerEvent, WorkerIdentity } from '../../ports/attempt-queue.js';
import type { Clock } from '../../ports/clock.js';
import type { GitPort, RemoteAuth } from '../../ports/git.js';
import type { Workspace } from '../../ports/workspace.js';
import type { AttemptInput, AttemptObserver, CallBudget } from '../attempt/attempt-io.js';
import type { AttemptExecutor } from './attempt-executor.js';
import type { PortPool } from '../attempt/port-pool.js';
import { personEnv, taskEnv } from '../attempt/task-env.js';
import { baseRef } from './remote-branches.js';
import { toWireError } from './wire-error.js';
import { prepareCache } from './job-cache.js';
import { rolesFromWire } from './wire-roles.js';
import { applyPolicy, isNeverPassed, machineFault, type WorkerPolicy } from './job-policy.js';
import { pushBranch } from './job-push.js';
import { Controls, JobHandedBackError } from './job-controls.js';
import type { RoleDefinition } from '../roles/definitions.js';
import type { Role } from '../../domain/types.js';

export { JobHandedBackError } from './job-controls.js';

export interface JobRunnerDeps {
  identity: WorkerIdentity;
  /** the worker's pipeline, built on its cache repository */
  pipeline: AttemptExecutor;
  /** the worker's cache repository */
  git: GitPort;
  workspace: Workspace;
  worktreeOf: (taskId: string) => string;
  ports: PortPool;
  clock: Clock;
  /** the worker's own environment: where `job.passedEnv` values and PATH come from */
  parentEnv: NodeJS.ProcessEnv;
  /** a token for the remote, when it takes one over https */
  auth?: RemoteAuth;
  /** the worker's own rules over the job's word ({@link applyPolicy}); absent: the job as it is (tests) */
  policy?: WorkerPolicy;
  /**
   * Told when the attempt failed because this machine cannot work ({@link machineFault}): the job is then
   * handed back, uncharged, rather than failed, and the worker stops taking jobs.
   */
  cannotWork?: (why: string) => void;
  /**
   * A job that carries the coordinator's roles runs on `pipeline(roles)`, the roles checked against the
   * worker's `own` ({@link rolesFromWire}); without this, every job runs on `pipeline` and the worker's roles.
   */
  roles?: { own: Record<Role, RoleDefinition>; pipeline: (roles: Record<Role, RoleDefinition>) => AttemptExecutor };
}

/** Runs one job to its `result` or `failed` event; throws (the job goes back to the queue) when `signal` aborts. */
export async function runJob(
  queued: AttemptJob,
  channel: JobChannel,
  signal: AbortSignal,
  deps: JobRunnerDeps,
): Promise<void> {
  const controls = new Controls(channel, signal);
  const events = new Emitter(channel, signal);
  let job = queued;
  const port = deps.ports.acquire(job.taskId);
  try {
    await events.now({ kind: 'claimed', worker: deps.identity });
    if (deps.policy !== undefined) {
      const applied = applyPolicy(queued, deps.policy);
      if (!applied.ok) {
        const message = `job ${queued.jobId} refused by worker ${deps.identity.id}: ${applied.why}`;
        await events.now({ kind: 'failed', error: { kind: 'refused', message } });
        return;
      }
      job = applied.job;
      if (applied.withheld.length > 0)
        events.later({
          kind: 'notice',
          level: 'warn',
          message: `worker ${deps.identity.id} does not pass ${applied.withheld.join(', ')} to job ${job.jobId}: only the names its --env allows, and never credentials or telemetry settings`,
        });
    }
    // Before anything is fetched: roles the worker must not run fail the job (sent to the coordinator).
    const pipeline =
      job.roles === undefined || deps.roles === undefined
        ? deps.pipeline
        : deps.roles.pipeline(rolesFromWire(job.jobId, job.roles, deps.roles.own));
    const worktree = deps.worktreeOf(job.taskId);
    await prepareCache(job, worktree, deps);
    const base = baseRef(job.baseCommit);
    // Under a worker's rules not even setup on its host sees a telemetry header, a database URL or the secret.
    const parentEnv =
      deps.policy === undefined
        ? deps.parentEnv
        : Object.fromEntries(Object.entries(deps.parentEnv).filter(([name]) => !isNeverPassed(name)));
    const envInput = {
      taskId: job.taskId,
      worktree,
      branch: job.branch,
      base: job.base,
      gitRoot: deps.git.root,
      port,
      passed: job.passedEnv,
    };
    const result = await pipeline.run({
      spec: job.spec,
      config: job.config,
      base,
      repoRoot: deps.git.root,
      worktree,
      branch: job.branch,
      attempt: job.attempt,
      verifyOnly: job.verifyOnly,
      previousPlan: job.previousPlan,
      approvedPlan: job.approvedPlan,
      stopAfterPlan: job.stopAfterPlan,
      rebaseFirst: job.rebaseFirst,
      env: taskEnv(parentEnv, envInput),
      hostEnv: personEnv(parentEnv, envInput),
      hostSetupVouched: job.setupOnHost === true,
      evidence: job.evidence,
      signal: controls.signal,
      observer: observer(events, controls),
      budget: budget(job, controls, deps.clock),
    } satisfies AttemptInput);
    await events.drained();
    const head = await deps.git.revParse(`refs/heads/${job.branch}`);
    if (head !== null && head !== (job.branchCommit ?? job.baseCommit)) {
      controls.check();
      const pushed = await pushBranch(job, head, deps.git, deps.auth);
      if (pushed.kind === 'refused') {
        await events.now({ kind: 'failed', error: { kind: 'error', message: pushed.message } });
        return;
      }
      const landed = pushed.commit;
      if (pushed.adopted)
        events.later({
          kind: 'notice',
          level: 'info',
          message: `${job.branch} was pushed already by an earlier run of job ${job.jobId} with the same tree: adopted`,
        });
      await events.now({ kind: 'pushed', branch: job.branch, commit: landed });
      if (result.commit === head) result.commit = landed;
    }
    await events.now({ kind: 'result', result });
  } catch (caught) {
    if (signal.aborted || caught instanceof JobHandedBackError)
      throw caught instanceof JobHandedBackError
        ? caught
        : new JobHandedBackError(`job ${job.jobId} handed back`, { cause: caught });
    const fault = deps.cannotWork === undefined || controls.abortedBy !== null ? null : machineFault(caught);
    if (fault !== null) {
      deps.cannotWork!(fault);
      throw new JobHandedBackError(`job ${job.jobId} handed back: this worker cannot work: ${fault}`, {
        cause: caught,
      });
    }
    // An abort from the coordinator is why whatever was thrown was thrown.
    const error: WireError = controls.abortedBy ?? toWireError(caught);
    await events.drained().catch(() => undefined);
    await events.now({ kind: 'failed', error });
  } finally {
    controls.close();
    deps.ports.release(job.taskId);
  }
}

function observer(events: Emitter, controls: Controls): AttemptObserver {
  return {
    phase: (phase) => events.later({ kind: 'phase', phase }),
    agentEvent: (role, model, event) => events.later({ kind: 'agent', role, model, event }),
    output: (phase, chunk) => events.later({ kind: 'output', phase, chunk }),
    notice: (message, level) => events.later({ kind: 'notice', message, level }),
    planned: async (plan) => {
      const request = `${crypto.randomUUID()}`;
      const answer = controls.answerTo(request);
      // An emit that fails hands the job back, and the answer then rejects with nobody waiting for it.
      answer.catch(() => undefined);
      await events.now({ kind: 'planned', plan, request });
      return answer;
    },
  };
}

function budget(job: AttemptJob, controls: Controls, clock: Clock): CallBudget {
  const started = clock.now();
  return {
    beforeCall: () => controls.check(),
    remainingMs: () =>
      job.remainingMs === null ? Number.MAX_SAFE_INTEGER : Math.max(1, job.remainingMs - (clock.now() - started)),
  };
}

/** The job's events, emitted one after another; an emit that fails hands the job back. */
class Emitter {
  readonly #channel: JobChannel;
  readonly #signal: AbortSignal;
  #tail: Promise<void> = Promise.resolve();
  #failed: unknown = null;

  constructor(channel: JobChannel, signal: AbortSignal) {
    this.#channel = channel;
    this.#signal = signal;
  }

  /** queued after every event before it (an observer call cannot wait) */
  later(event: WorkerEvent): void {
    this.#tail = this.#tail.then(() => this.#emit(event));
    this.#tail.catch(() => undefined);
  }

  /** emitted after every event before it, and waited for */
  now(event: WorkerEvent): Promise<void> {
    this.later(event);
    return this.drained();
  }

  async drained(): Promise<void> {
    await this.#tail;
    if (this.#failed !== null) throw this.#failed;
  }

  async #emit(event: WorkerEvent): Promise<void> {
    if (this.#failed !== null) return;
    if (this.#signal.aborted) {
      this.#failed = new JobHandedBackError('the job was handed back');
      return;
    }
    try {
      await this.#channel.emit(event);
    } catch (error) {
      this.#failed = new JobHandedBackError(
        `an event could not be sent: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
  }
}
