import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { BullmqCoordinatorQueue } from '../../src/adapters/queue/bullmq-coordinator.js';
import { BullmqWorkerQueue } from '../../src/adapters/queue/bullmq-worker.js';
import { parseQueueUrl } from '../../src/adapters/queue/redis-url.js';
import { overnight } from '../../src/commands/overnight.js';
import { withQueue } from '../../src/commands/remote-attempts.js';
import { findRepo } from '../../src/commands/repo.js';
import { REPORTS_DIR, WORK_DIR } from '../../src/domain/layout.js';
import { FakeGitHub } from '../helpers/fake-github.js';
import { lyingWorker } from '../helpers/fake-lying-worker.js';
import { TEST_KEYS } from '../helpers/fleet-secret.js';
import { FakeModel } from '../helpers/fake-model.js';
import { backlogRepo } from '../helpers/fleet-harness.js';
import { git } from '../helpers/git-repo.js';
import { startRedis, type RedisServer } from '../helpers/redis-server.js';
import { bareRemote, TEST_ENV, workerPipeline } from '../helpers/remote-harness.js';
import { readState } from '../helpers/state-file.js';

/**
 * Workers are not trusted with the word `verified`: whatever a worker reports, the coordinator checks the
 * commit it fetched in its own sandbox, and only that run is evidence. A lying worker speaks the real
 * protocol through the real BullMQ adapter; Redis, git, the remote and the sandbox are real.
 */

let cleanups: Array<() => Promise<void>> = [];
let redis: RedisServer | null = null;
afterEach(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
  cleanups = [];
  await redis?.close();
  redis = null;
});

const CHECK = 'sh test.sh';
const TEST_SH = `if grep -qx good value.txt; then printf '# tests 1\\n# pass 1\\n# fail 0\\n'; else printf '# tests 1\\n# pass 0\\n# fail 1\\n'; exit 1; fi\n`;
const FILES = { 'test.sh': TEST_SH, 'value.txt': 'good\n' };
/** the lie: a commit that breaks the suite and touches two files, reported verified */
const BREAKS = { files: { 'value.txt': 'bad\n', 'extra.txt': 'extra\n' } };

async function queueUrl(): Promise<string> {
  redis = await startRedis();
  return redis.url;
}

/** `loopfleet --overnight` in this process, its attempts sent to workers over Redis; the night's report text. */
async function night(
  root: string,
  remote: string,
  url: string,
  options: { autoMerge: boolean; env?: NodeJS.ProcessEnv },
) {
  const queue = await BullmqCoordinatorQueue.open(parseQueueUrl(url), TEST_KEYS, () => undefined);
  cleanups.push(() => queue.close());
  const model = new FakeModel(() => ({}));
  const lines: string[] = [];
  const code = await overnight(
    await findRepo(root),
    {
      overrides: {},
      autoMerge: options.autoMerge,
      watch: false,
      env: { ...TEST_ENV, ...options.env },
      services: (s) => ({ ...withQueue(s, queue, { remote: 'origin', remoteUrl: remote }), model, cliModel: model }),
    },
    (line) => lines.push(line),
  );
  const dir = join(root, WORK_DIR, REPORTS_DIR);
  const [name] = await readdir(dir);
  return { code, lines, model, report: await readFile(join(dir, name!), 'utf8') };
}

describe('a worker that claims verified for a commit whose check fails', () => {
  it('under --auto-merge nothing is merged, base still passes, the claim is recorded and the worker flagged', {
    timeout: 120_000,
  }, async () => {
    const url = await queueUrl();
    const root = await backlogRepo(
      cleanups,
      `check: ${CHECK}\nreview: false\ngates: { attempts: 2 }`,
      '- [ ] T-1 Better value',
      FILES,
    );
    const remote = await bareRemote(cleanups, root);
    const before = await git(root, 'rev-parse', 'main');
    const liar = await lyingWorker(url, CHECK, () => BREAKS);
    cleanups.push(liar.close);

    const { report, model } = await night(root, remote, url, { autoMerge: true });

    expect(liar.jobs.length).toBeGreaterThan(0);
    expect(model.calls).toHaveLength(0);
    const task = (await readState(root)).tasks['T-1'];
    expect(task.status).toBe('failed');
    expect(await git(root, 'rev-parse', 'main')).toBe(before);
    // Base's own suite still passes.
    expect((await execa('sh', ['test.sh'], { cwd: root, reject: false })).exitCode).toBe(0);
    const first = task.attempts[0];
    expect(first.outcome).toBe('check-failed');
    expect(first.reason).toMatch(/^worker claimed verified; coordinator check failed: check `sh test\.sh` exited 1/);
    // The evidence is the coordinator's run: its exit code, its counts, git's diffstat; no reviewer's pass.
    expect(first.check).toMatchObject({ command: CHECK, exitCode: 1 });
    expect(first.check.counts).toMatchObject({ failed: 1, total: 1 });
    expect(first.diffStat).toMatch(/2 files changed/);
    expect(first.verdict).toBeNull();
    expect(liar.jobs).toEqual(['T-1:1', 'T-1:2']);
    expect(task.workerFlag).toMatchObject({ worker: liar.identity.id, attempt: 2 });
    expect(task.workerFlag.reason).toMatch(/^worker claimed verified; coordinator check failed/);
    // The attempts' check lines are the coordinator's runs (the baseline's ✔ is base's own pass).
    expect(report).not.toMatch(/✔ `sh test\.sh` → exit 0 in/);
    expect(report).toMatch(/✗ `sh test\.sh` → exit 1 in/);
    expect(report).not.toContain('**Reviewer:** pass');
    expect(report).toContain(`⚑ worker ${liar.identity.id} flagged`);
  });

  it('under land: pr no PR says "Verified by loopfleet" for it, and a diffstat claim is replaced by git\'s', {
    timeout: 120_000,
  }, async () => {
    const github = await new FakeGitHub('acme/widgets').start();
    cleanups.push(() => github.close());
    const url = await queueUrl();
    const root = await backlogRepo(
      cleanups,
      `land: pr\nforge: { type: github, repo: acme/widgets }\ncheck: ${CHECK}\nreview: false\ngates: { attempts: 2 }`,
      '- [ ] T-1 Better value\n- [ ] T-2 Two notes',
      FILES,
    );
    const remote = await bareRemote(cleanups, root);
    // T-2's check passes, but the worker says it changed one file where its commit changes two.
    const liar = await lyingWorker(url, CHECK, (job) =>
      job.taskId === 'T-1' ? BREAKS : { files: { 'notes/a.txt': 'a\n', 'notes/b.txt': 'b\n' } },
    );
    cleanups.push(liar.close);
    const env = { GH_TOKEN: github.token, GITHUB_API_URL: github.url, GITHUB_TOKEN: '', GITLAB_TOKEN: '' };

    await night(root, remote, url, { autoMerge: false, env });

    const verifiedBodies = github.pulls.filter((p) => p.body.includes('Verified by loopfleet'));
    expect(verifiedBodies.map((p) => p.head)).toEqual(['loop/T-2']);
    const body = verifiedBodies[0]!.body;
    expect(body).toContain('notes/a.txt');
    expect(body).toContain('2 files changed');
    expect(body).not.toContain('1 file changed');
    expect(body).not.toContain('value.txt');
    const state = await readState(root);
    expect(state.tasks['T-1'].status).toBe('failed');
    expect(state.tasks['T-2'].status).toBe('verified');
  });
});

/** A worker whose implementer writes note.txt and reports what its pipeline found, on the queue at `url`. */
async function honestWorker(url: string, remote: string): Promise<void> {
  const honest = await workerPipeline(
    cleanups,
    remote,
    ({ role }) => (role === 'implementer' ? { edits: { 'note.txt': 'a note\n' } } : {}),
    'honest',
  );
  const worker = await BullmqWorkerQueue.open(parseQueueUrl(url), TEST_KEYS, honest.identity, () => undefined);
  cleanups.push(() => worker.close(false));
  worker.process(honest.identity, honest.handler);
}

describe('an honest worker', () => {
  it('still lands under --auto-merge: the coordinator check passes, and the merge queue does not run it twice', {
    timeout: 120_000,
  }, async () => {
    const url = await queueUrl();
    const root = await backlogRepo(cleanups, `check: ${CHECK}\nreview: false`, '- [ ] T-1 Add a note', FILES);
    const remote = await bareRemote(cleanups, root);
    await honestWorker(url, remote);

    const { lines } = await night(root, remote, url, { autoMerge: true });

    const task = (await readState(root)).tasks['T-1'];
    expect(task.status).toBe('merged');
    expect(task.workerFlag).toBeUndefined();
    expect(task.attempts.map((a: { outcome: string }) => a.outcome)).toEqual(['verified']);
    expect(await git(root, 'show', 'main:note.txt')).toBe('a note');
    // The coordinator checked the very commit that was merged, once.
    const merged = await git(root, 'rev-parse', 'main^2');
    expect(await git(root, 'rev-parse', 'refs/loopfleet/checked/T-1')).toBe(merged);
    expect(lines.filter((l) => /coordinator check of .* passed/.test(l))).toHaveLength(1);
    expect(lines.join('\n')).not.toMatch(/checking again before it lands|checking it before it lands/);
  });

  it('has setup: run in the worktree the coordinator makes for its branch before the check, as a local attempt would', {
    timeout: 120_000,
  }, async () => {
    const url = await queueUrl();
    // The check needs what setup makes (an ignored file): a coordinator that skipped setup would fail it.
    const needsSetup = `test -f .setup-done || { echo 'setup did not run'; exit 1; }\n${TEST_SH}`;
    const root = await backlogRepo(
      cleanups,
      `setup: echo done > .setup-done\ncheck: ${CHECK}\nreview: false`,
      '- [ ] T-1 Add a note',
      {
        ...FILES,
        'test.sh': needsSetup,
        '.gitignore': '.setup-done\n',
      },
    );
    const remote = await bareRemote(cleanups, root);
    await honestWorker(url, remote);

    await night(root, remote, url, { autoMerge: false });

    const task = (await readState(root)).tasks['T-1'];
    expect(task.attempts.map((a: { outcome: string }) => a.outcome)).toEqual(['verified']);
    expect(task.workerFlag).toBeUndefined();
    expect(task.status).toBe('verified');
  });
});
