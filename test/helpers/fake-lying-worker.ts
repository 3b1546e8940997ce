/**
 * A worker that lies, speaking the queue's real protocol: the BullMQ worker adapter with a hostile job
 * handler in place of loopfleet's pipeline. For each job it clones the job's remote, commits the files it
 * is told to on the commit the job starts from, pushes `loop/<id>` (forced: it honours no lease), and
 * reports whatever it is told to claim — by default `verified`, with a passing check and a reviewer's pass
 * it never ran.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BullmqWorkerQueue, newIdentity } from '../../src/adapters/queue/bullmq-worker.js';
import { parseQueueUrl } from '../../src/adapters/queue/redis-url.js';
import type { AttemptResult } from '../../src/domain/attempt-result.js';
import type { AttemptJob, WorkerIdentity } from '../../src/ports/attempt-queue.js';
import { git, writeFiles } from './git-repo.js';
import { TEST_KEYS } from './fleet-secret.js';

export interface Lie {
  /** the files its commit writes (relative to the repository) */
  files: Record<string, string>;
  /** what its result says on top of {@link claimedVerified} */
  claim?: Partial<AttemptResult>;
}

/** The result a liar sends: verified, the check passed, the reviewer said pass, one file changed. */
export function claimedVerified(commit: string, check: string): AttemptResult {
  const passed = {
    command: check,
    exitCode: 0,
    timedOut: false,
    outputTail: '# tests 9\n# pass 9\n# fail 0\n',
    durationMs: 12,
    counts: { runner: 'node:test', passed: 9, failed: 0, skipped: 0, total: 9 },
  };
  return {
    outcome: 'verified',
    reason: null,
    evidence: null,
    plan: 'Change the value.',
    setup: null,
    check: passed,
    guard: [],
    verdict: { pass: true, reasons: ['the change is correct and well tested'] },
    commit,
    diffStat: ' value.txt | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)\n',
    checks: [passed],
    baseline: [],
    proof: null,
  };
}

export interface LyingWorker {
  identity: WorkerIdentity;
  /** the job ids it took, in order */
  jobs: string[];
  close(): Promise<void>;
}

/**
 * A compromised worker: it holds the fleet secret (its events are signed as an honest worker's are) and
 * lies in them. Takes jobs from the queue at `url` and answers each with `lieFor(job)`; `check` is the command it claims ran. */
export async function lyingWorker(url: string, check: string, lieFor: (job: AttemptJob) => Lie): Promise<LyingWorker> {
  const identity = newIdentity(1);
  const queue = await BullmqWorkerQueue.open(parseQueueUrl(url), TEST_KEYS, identity, () => undefined);
  const jobs: string[] = [];
  queue.process(identity, async (job, channel) => {
    jobs.push(job.jobId);
    const lie = lieFor(job);
    const dir = await mkdtemp(join(tmpdir(), 'loopfleet-liar-'));
    try {
      await git(tmpdir(), 'clone', '--quiet', job.remoteUrl, dir);
      await git(dir, 'fetch', '--quiet', 'origin', `refs/loopfleet/base/${job.baseCommit}`);
      await git(dir, 'checkout', '--quiet', '-B', job.branch, job.baseCommit);
      await writeFiles(dir, lie.files);
      await git(dir, 'add', '-A');
      await git(dir, 'commit', '--quiet', '-m', `${job.taskId}: done, trust me`);
      await git(dir, 'push', '--quiet', '--force', 'origin', `HEAD:refs/heads/${job.branch}`);
      const commit = await git(dir, 'rev-parse', 'HEAD');
      await channel.emit({ kind: 'claimed', worker: identity });
      await channel.emit({ kind: 'phase', phase: 'verify' });
      await channel.emit({ kind: 'pushed', branch: job.branch, commit });
      await channel.emit({ kind: 'result', result: { ...claimedVerified(commit, check), ...lie.claim } });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
  return { identity, jobs, close: () => queue.close(false) };
}
