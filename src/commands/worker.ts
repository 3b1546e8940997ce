/**
 * `loopfleet worker --queue redis://…`: takes attempt jobs from the fleet's queue and runs each with this
 * machine's own pipeline (its model credentials, agents, process runner and sandbox) on a repository cache
 * of the job's remote, then reports back through the queue ({@link runJob}).
 *
 * Invariants: a worker whose sandbox fails its self-test takes no job, and says why on stderr and in its
 * heartbeat; one that meets a fault of its machine ({@link machineFault}: a full disk, no git) hands the
 * job back uncharged and takes no more jobs, saying why the same way; on SIGTERM it takes no new job, lets running attempts finish within the grace period, then
 * hands back what still runs (another worker restarts those attempts) and exits 0.
 */
import { join } from 'node:path';
import { BullmqWorkerQueue, newIdentity } from '../adapters/queue/bullmq-worker.js';
import { openTelemetry } from '../adapters/telemetry/otel-open.js';
import { workerAttemptSpans } from '../core/telemetry/worker-spans.js';
import type { QueueAccess } from '../adapters/queue/queue-guard.js';
import { sandboxSelfTest } from '../adapters/sandbox/selftest.js';
import { runJob } from '../core/executor/job-runner.js';
import { InProcessExecutor } from '../core/executor/attempt-executor.js';
import { Pipeline } from '../core/attempt/pipeline.js';
import { defaultConfig } from '../core/backlog/config.js';
import { PortPool } from '../core/attempt/port-pool.js';
import {
  applyPolicy,
  isNeverPassed,
  machineFault,
  redactUrls,
  type WorkerPolicy,
} from '../core/executor/job-policy.js';
import type { WorkerEvent } from '../ports/attempt-queue.js';
import { UsageError } from '../domain/errors.js';
import { visible } from '../domain/sanitize.js';
import { formatDuration } from '../core/text/format-units.js';
import { systemClock } from '../ports/clock.js';
import { defaultCacheRoot, RepoCache } from './worker-cache.js';
import { serviceLog, sharedRunner } from './services.js';

export interface WorkerOptions {
  queue: QueueAccess;
  /** what this worker does whatever a job asks: its remotes, the names it passes, host setup */
  policy: WorkerPolicy;
  concurrency: number;
  /** the repository cache's folder; null: ~/.cache/loopfleet/repos */
  cache: string | null;
  /** how long running attempts may go on after SIGTERM before they are handed back */
  graceMs: number;
  /** how long a job's lock holds without renewal: a dead worker's job goes to another after it */
  lockMs: number;
  env: NodeJS.ProcessEnv;
}

/** Why this machine must not take jobs, or null: bubblewrap runs here and its sandbox holds. */
async function refusal(): Promise<string | null> {
  const runner = sharedRunner();
  if (!(await runner.sandboxAvailable()))
    return 'bubblewrap (bwrap) cannot run here: a worker runs agent-written code only in its sandbox';
  const escapes = await sandboxSelfTest(runner);
  return escapes.length === 0 ? null : `the sandbox is weaker than promised: ${escapes.join('; ')}`;
}

export async function worker(
  options: WorkerOptions,
  out: (line: string) => void,
  err: (line: string) => void,
): Promise<number> {
  const identity = newIdentity(options.concurrency);
  const log = (level: 'info' | 'warn', message: string) => err(`loopfleet worker: ${level}: ${visible(message)}`);
  serviceLog.target = (level, message) => err(`loopfleet worker: ${level}: model client: ${visible(message)}`);
  // A bad OTEL_EXPORTER_OTLP_*ENDPOINT is bad input (exit 2) before Redis is touched. The SDK reads this
  // process's own environment, whatever `options.env` holds.
  const telemetry = await openTelemetry(process.env, {
    warn: (message) => log('warn', message),
    instanceId: identity.id,
  });
  let queue: BullmqWorkerQueue;
  try {
    queue = await BullmqWorkerQueue.open(options.queue, options.queue.keys, identity, log, {
      lockMs: options.lockMs,
      stalledCheckMs: Math.max(500, Math.floor(options.lockMs / 2)),
    });
  } catch (error) {
    await telemetry.shutdown().catch(() => undefined);
    throw new UsageError(`--queue: cannot reach Redis at ${options.queue.display}: ${(error as Error).message}`);
  }

  let stopping: (signal: NodeJS.Signals) => void = () => undefined;
  const stopped = new Promise<NodeJS.Signals>((resolve) => (stopping = resolve));
  let signals = 0;
  let handBack: () => void = () => undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    signals++;
    if (signals === 1) stopping(signal);
    else handBack();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  try {
    const why = await refusal();
    if (why !== null) {
      err(`loopfleet worker: refusing jobs: ${visible(why)}`);
      await queue.setRefusing(why);
      out(`worker ${identity.id} on ${options.queue.display}: refusing jobs until it is stopped`);
      await stopped;
      await queue.close(true);
      return 0;
    }
    const cache = new RepoCache(options.cache ?? defaultCacheRoot(options.env), options.env);
    const ports = new PortPool(defaultConfig().ports);
    // Said once; the job that met it goes back uncharged and a healthy worker takes it.
    let broken: string | null = null;
    const cannotWork = (why: string) => {
      if (broken !== null) return;
      broken = `this machine cannot run attempts: ${why}`;
      err(`loopfleet worker: refusing jobs: ${visible(broken)}`);
      void queue.setRefusing(broken);
    };
    queue.process(identity, async (queued, channel, signal) => {
      const id = visible(queued.jobId);
      out(`job ${id}: started`);
      // Said here as well as to the coordinator; a refused job is failed by runJob before anything is fetched.
      const applied = applyPolicy(queued, options.policy);
      if (!applied.ok) {
        err(`loopfleet worker: warn: job ${id}: refused: ${visible(applied.why)}`);
        const message = `job ${queued.jobId} refused by worker ${identity.id}: ${applied.why}`;
        await channel.emit({ kind: 'claimed', worker: identity });
        await channel.emit({ kind: 'failed', error: { kind: 'refused', message } });
        out(`job ${id}: refused`);
        return;
      }
      if (applied.withheld.length > 0)
        err(
          `loopfleet worker: warn: job ${id}: not passing ${visible(applied.withheld.join(', '))}: only the names --env allows, never credentials or telemetry settings`,
        );
      if (applied.sandboxKept)
        err(
          `loopfleet worker: warn: job ${id}: sandbox: off is not honoured on a worker; its code runs in this worker's sandbox`,
        );
      const { job } = applied;
      // The phases as children of the coordinator's attempt span (job.traceparent); ids and names only.
      const spans = workerAttemptSpans(telemetry, job, identity.id);
      const traced = {
        messages: (s: AbortSignal) => channel.messages(s),
        emit: (event: WorkerEvent) => {
          spans.observe(event);
          return channel.emit(event);
        },
      };
      try {
        const cached = await cache.get(job.remoteUrl, job.config);
        await runJob(queued, traced, signal, {
          identity,
          policy: options.policy,
          cannotWork,
          pipeline: cached.pipeline,
          git: cached.git,
          workspace: cached.services.workspace,
          worktreeOf: (taskId) => join(cached.repo.workDir, taskId),
          ports,
          clock: systemClock,
          // Never a telemetry header, a database URL or the fleet secret, not even to setup on the host.
          parentEnv: Object.fromEntries(Object.entries(options.env).filter(([name]) => !isNeverPassed(name))),
          roles: {
            own: cached.services.roles,
            pipeline: (roles) => new InProcessExecutor(new Pipeline({ ...cached.services, roles })),
          },
        });
        out(`job ${id}: reported`);
      } catch (error) {
        const fault = machineFault(error);
        if (fault !== null) cannotWork(fault);
        out(`job ${id}: handed back: ${visible(redactUrls(error instanceof Error ? error.message : String(error)))}`);
        throw error;
      } finally {
        spans.end();
      }
    });
    out(`worker ${identity.id} on ${options.queue.display}: taking jobs, ${options.concurrency} at once`);
    const signal = await stopped;
    out(`received ${signal}: no new jobs; running attempts have ${formatDuration(options.graceMs)} to finish`);
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<void>((resolve) => {
      handBack = resolve;
      timer = setTimeout(resolve, options.graceMs);
    });
    const drained = queue.close(true).then(() => true);
    if (!(await Promise.race([drained, graceOver.then(() => false)]))) {
      out('handing back the attempts that still run');
      await queue.close(false);
    }
    clearTimeout(timer);
    out(`worker ${identity.id} stopped`);
    return 0;
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    await queue.close(false);
    // After the drain, so the last phases are exported; bounded by the flush timeout.
    await telemetry.shutdown().catch((error: Error) => log('warn', `OpenTelemetry: ${error.message}`));
  }
}
