/**
 * What a worker does for a job, whatever the job asks: the worker's own rules ({@link WorkerPolicy}) over
 * the job's word.
 *
 * Invariants, for a job that {@link applyPolicy} lets through:
 * - it is about one task whose id has the backlog's form, and its branch is that task's `loop/<id>`: a job
 *   naming `main` (or any other ref) is refused before anything is fetched, so nothing else is ever pushed;
 * - its remote is one the worker was started for, compared without userinfo; the worker uses its own
 *   spelling of that remote (its own credentials), never the job's;
 * - it passes only environment names the worker allows, and never a telemetry setting, a model key, a forge
 *   token, a database URL or the fleet secret, even when the worker's list names one;
 * - its code runs in the worker's sandbox (`sandbox: off` is not honoured), and setup runs on the host only
 *   when the worker allows host setup and the coordinator's sealed job says base holds only the person's
 *   commits ({@link AttemptJob.setupOnHost}).
 */
import { isAbsolute, resolve } from 'node:path';
import type { AttemptJob } from '../../ports/attempt-queue.js';
import { taskBranch } from '../../domain/layout.js';
import { isLoopfleetCredential } from '../../domain/host-env.js';
import { TASK_ID_RE } from '../backlog/scan.js';
import { isSecretName } from '../attempt/task-env.js';

export interface WorkerPolicy {
  /** the remotes this worker fetches from and pushes to (`--remote`), as it reaches them */
  remotes: readonly string[];
  /** names of this worker's environment a job may pass (`--env`) */
  env: readonly string[];
  /** `--allow-host-setup`: setup may run outside the sandbox when the sealed job vouches for base */
  hostSetup: boolean;
}

export type Applied =
  | { ok: true; job: AttemptJob; withheld: string[]; sandboxKept: boolean; hostSetup: boolean }
  | { ok: false; why: string };

/** Names never passed to a job, whatever the worker's `--env` says. */
const NEVER =
  /^(OTEL_|LOOPFLEET_QUEUE_SECRET$)|(^|_)(DATABASE|DB|POSTGRES|PG|MYSQL|MONGO(DB)?|REDIS)(_URL|_URI|_DSN|_PASS)?$|^PG[A-Z]+$|_DSN$/;

export function isNeverPassed(name: string): boolean {
  return NEVER.test(name) || isSecretName(name) || isLoopfleetCredential(name);
}

/** A remote's URL without user, password or token, so two spellings of one remote compare equal. */
export function withoutUserinfo(url: string): string {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) {
    try {
      const u = new URL(url);
      u.username = '';
      u.password = '';
      return u.toString().replace(/\/+$/, '');
    } catch {
      return url;
    }
  }
  const scp = /^[^/@:]+@([^:/]+:.*)$/.exec(url);
  if (scp !== null) return scp[1]!;
  return isAbsolute(url) ? resolve(url) : url;
}

/** `text` with the userinfo of every URL in it replaced by `…`, for logs and reports. */
export function redactUrls(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^/\s@]+@/gi, '$1…@');
}

/**
 * Why this machine cannot run attempts at all, when `error` says so (a full or read-only disk, no git, no
 * memory or file handles), or null for an error of the attempt itself. A worker that meets one hands the
 * job back uncharged and stops taking jobs.
 */
export function machineFault(error: unknown): string | null {
  for (let e = error, depth = 0; e !== undefined && e !== null && depth < 5; depth++) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    const text = `${typeof code === 'string' ? code : ''} ${typeof message === 'string' ? message : String(e)}`;
    if (/ENOSPC|No space left on device|EDQUOT|Disk quota exceeded/i.test(text)) return 'its disk is full (ENOSPC)';
    if (/EROFS|Read-only file system/i.test(text)) return 'its disk is read-only (EROFS)';
    if (/spawn git ENOENT|git: (command )?not found/i.test(text)) return 'git cannot run here';
    if (/EMFILE|ENFILE|ENOMEM/.test(text)) return `it ran out of ${/ENOMEM/.test(text) ? 'memory' : 'file handles'}`;
    e = (e as { cause?: unknown }).cause;
  }
  return null;
}

export function applyPolicy(job: AttemptJob, policy: WorkerPolicy): Applied {
  if (typeof job.taskId !== 'string' || !TASK_ID_RE.test(job.taskId))
    return { ok: false, why: `task id ${JSON.stringify(job.taskId)} is not a task id` };
  if (job.spec?.id !== job.taskId) return { ok: false, why: `its task ${job.spec?.id} is not ${job.taskId}` };
  if (!job.jobId.startsWith(`${job.taskId}:`))
    return { ok: false, why: `job ${job.jobId} is not of task ${job.taskId}` };
  if (job.branch !== taskBranch(job.taskId))
    return {
      ok: false,
      why: `it names branch ${JSON.stringify(job.branch)}; a worker pushes only ${taskBranch(job.taskId)}`,
    };
  const wanted = withoutUserinfo(job.remoteUrl);
  const remote = policy.remotes.find((r) => withoutUserinfo(r) === wanted);
  if (remote === undefined)
    return {
      ok: false,
      why: `its remote ${redactUrls(job.remoteUrl)} is not one this worker was started for (--remote)`,
    };
  const allowed = new Set(policy.env);
  const passed = job.passedEnv.filter((name) => allowed.has(name) && !isNeverPassed(name));
  const withheld = job.passedEnv.filter((name) => !passed.includes(name));
  const sandboxKept = job.config.sandbox === 'off';
  const hostSetup = policy.hostSetup && job.setupOnHost === true;
  return {
    ok: true,
    job: {
      ...job,
      remoteUrl: remote,
      passedEnv: passed,
      setupOnHost: hostSetup,
      config: sandboxKept ? { ...job.config, sandbox: 'auto' } : job.config,
    },
    withheld,
    sandboxKept,
    hostSetup,
  };
}
