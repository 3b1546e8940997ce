import { existsSync } from 'node:fs';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startModelServer } from '../../src/demo/model-server.js';
import { demoScript } from '../../src/demo/scripts.js';
import { openFleet, runFleet } from '../helpers/fleet-harness.js';
import { FakeGitHub } from '../helpers/fake-github.js';
import { git } from '../helpers/git-repo.js';
import { CLI } from '../helpers/paths.js';
import { counts, fixIt, githubEnv, prRepo, publishedTask, stateOf, syncPass } from '../helpers/pr-github.js';
import { commitOnRemote, mergeOnRemote, remoteHead } from '../helpers/pr-remote.js';

/**
 * Faults of the forge and of loopfleet's own process on the pull-request path: none costs verified work
 * and none hangs. Each test ends with the counts of verified, merged and lost tasks.
 */

let cleanups: Array<() => Promise<void>> = [];
let github: FakeGitHub;
beforeEach(async () => {
  github = await new FakeGitHub('acme/widgets').start();
});
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
  await github.close();
});

const KEY = 'sk-ant-forge-faults-0123456789abcdefghijklmnopqrstuvwxyz';

function onePerBranch(): Record<string, number> {
  const per: Record<string, number> = {};
  for (const p of github.pulls) per[p.head] = (per[p.head] ?? 0) + 1;
  return per;
}

describe('a pull request whose creation failed is found again by its branch', () => {
  it('a 502 on creation: the next sync opens it; the PR behind it was opened meanwhile', {
    timeout: 180_000,
  }, async () => {
    const { root } = await prRepo(cleanups, '- [ ] T-1 One\n- [ ] T-2 Two', 'concurrency: 1');
    github.createFaults.push('fail');
    await runFleet(root, fixIt, { env: githubEnv(github) });
    expect(github.pulls.map((p) => p.head)).toEqual(['loop/T-2']);
    expect(await counts(root)).toMatchObject({ verified: 2, merged: 0, lost: 0 });

    await syncPass(root, github);
    expect(onePerBranch()).toEqual({ 'loop/T-1': 1, 'loop/T-2': 1 });
    const state = await stateOf(root);
    expect(state.tasks['T-1']!.pr).toMatchObject({ state: 'open', number: 2 });
    expect(await counts(root)).toMatchObject({ verified: 2, merged: 0, lost: 0 });
  });

  it('created on the forge but the answer lost (502 after the fact): the next sync adopts it, never a second one', {
    timeout: 180_000,
  }, async () => {
    const { root } = await prRepo(cleanups, '- [ ] T-1 One');
    github.createFaults.push('lost');
    await runFleet(root, fixIt, { env: githubEnv(github) });
    expect(github.pulls).toHaveLength(1);
    expect((await stateOf(root)).tasks['T-1']!.pr).toBeUndefined();

    await syncPass(root, github);
    expect(onePerBranch()).toEqual({ 'loop/T-1': 1 });
    expect((await stateOf(root)).tasks['T-1']!.pr).toMatchObject({ state: 'open', number: 1 });
    expect(await counts(root)).toMatchObject({ verified: 1, merged: 0, lost: 0 });
  });

  it('the coordinator killed (SIGKILL) while the forge was creating it: another --overnight adopts it', {
    timeout: 180_000,
  }, async () => {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
    const server = await startModelServer({
      apiKeys: [KEY],
      script: demoScript([{ taskId: 'T-1', kind: 'pass', edits: [{ path: 'fixed.txt', content: 'one\n' }] }]),
    });
    cleanups.push(() => server.close());
    const { root } = await prRepo(cleanups, '- [ ] T-1 One');
    github.createFaults.push('hang');
    const creating = new Promise<void>((resolve) => {
      github.onHang = () => resolve();
    });
    const night = execa(process.execPath, [CLI, '--overnight'], {
      cwd: root,
      reject: false,
      env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: KEY, NO_COLOR: '1', ...githubEnv(github) },
    });
    const ended = night.then((r) => r);
    // Ordered on the forge having received the creation, never on a clock.
    const first = await Promise.race([creating.then(() => 'creating' as const), ended.then(() => 'ended' as const)]);
    expect(first).toBe('creating');
    night.kill('SIGKILL');
    const done = await ended;
    expect(done.signal).toBe('SIGKILL');
    expect(github.pulls).toHaveLength(1);

    // Another --overnight: it opens or adopts before it runs anything.
    const again = await execa(process.execPath, [CLI, '--overnight'], {
      cwd: root,
      reject: false,
      env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: KEY, NO_COLOR: '1', ...githubEnv(github) },
    });
    expect(again.exitCode, `${again.stdout}\n${again.stderr}`).toBe(0);
    expect(again.stdout).toContain('T-1 PR #1 updated: ');
    expect(onePerBranch()).toEqual({ 'loop/T-1': 1 });
    expect((await stateOf(root)).tasks['T-1']!.pr).toMatchObject({ state: 'open', number: 1 });
    expect(await counts(root)).toMatchObject({ verified: 1, merged: 0, lost: 0 });
  });
});

/**
 * Starts `args` of the CLI while every forge request hangs, sends SIGTERM once one hangs, and gives back
 * how it ended: whether it ended only after the signal, its exit code and output, and the signal-to-exit time.
 */
async function signalledWhileHung(root: string, args: string[], env: Record<string, string>) {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
  github.hangAll = true;
  const hung = new Promise<void>((resolve) => {
    github.onHang = () => resolve();
  });
  const running = execa(process.execPath, [CLI, ...args], {
    cwd: root,
    reject: false,
    forceKillAfterDelay: false,
    env: { NO_COLOR: '1', ...githubEnv(github), ...env },
  });
  let signalled = false;
  const ended = running.then((r) => ({ ...r, afterSignal: signalled }));
  const first = await Promise.race([hung.then(() => 'hung' as const), ended.then(() => 'ended' as const)]);
  expect(first).toBe('hung');
  signalled = true;
  const sent = performance.now();
  running.kill('SIGTERM');
  const done = await ended;
  github.hangAll = false;
  return { ...done, signalToExitMs: Math.round(performance.now() - sent) };
}

describe('a forge that never answers hangs nothing', () => {
  it('SIGTERM ends `loopfleet sync` while a forge request hangs: exit 130, after the signal', {
    timeout: 120_000,
  }, async () => {
    // A request timeout far beyond the test's: only the signal can end this sync.
    const { root } = await publishedTask(cleanups, github, 'pr: { draft: false, timeout: 1h }');
    const done = await signalledWhileHung(root, ['sync'], {});
    console.log(`sync: SIGTERM to exit ${done.signalToExitMs} ms (exit ${done.exitCode})`);
    expect(done.afterSignal).toBe(true);
    expect(done.exitCode, `${done.stdout}\n${done.stderr}`).toBe(130);
    expect(done.stdout).toContain('received SIGTERM');
    expect(await counts(root)).toMatchObject({ verified: 1, merged: 0, lost: 0 });
  });

  it('SIGTERM ends `loopfleet --watch` while its sync pass hangs on the forge: exit 130, after the signal', {
    timeout: 120_000,
  }, async () => {
    const { root } = await publishedTask(cleanups, github, 'pr: { draft: false, timeout: 1h }');
    const done = await signalledWhileHung(root, ['--watch'], {
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
      ANTHROPIC_API_KEY: KEY,
    });
    expect(done.afterSignal).toBe(true);
    expect(done.exitCode, `${done.stdout}\n${done.stderr}`).toBe(130);
    expect(await counts(root)).toMatchObject({ verified: 1, merged: 0, lost: 0 });
  });
});

describe('merged at a head that is not loopfleet’s latest', () => {
  it('the task is not merged while base lacks its last verified commit: told, and the newer commit offered as a follow-up PR', {
    timeout: 240_000,
  }, async () => {
    const { root, bare } = await publishedTask(cleanups, github);
    const first = (await remoteHead(bare, 'loop/T-1'))!;
    github.grant('carol', 'write');
    github.addComment(1, 'carol', '/loopfleet also handle leap years', 'COLLABORATOR');
    expect((await syncPass(root, github)).sent).toEqual(['T-1']);
    // Someone merges PR #1 as it is, while the new attempt is on its way.
    await mergeOnRemote(bare, 'loop/T-1');
    github.mergeOnForge(1);
    await runFleet(root, fixIt, { env: githubEnv(github) });
    const latest = await git(root, 'rev-parse', 'loop/T-1');
    expect(latest).not.toBe(first);

    const pass = await syncPass(root, github);
    const task = (await stateOf(root)).tasks['T-1']!;
    expect(task.status).toBe('verified');
    expect(task.reason).toContain(`merged at ${first.slice(0, 8)}`);
    expect(task.reason).toContain(latest.slice(0, 8));
    expect(pass.logs.join('\n')).toMatch(/follow-up/);
    // The newer commit is offered as a follow-up pull request on the same branch.
    expect(github.pulls.map((p) => [p.number, p.head, p.state])).toEqual([
      [1, 'loop/T-1', 'closed'],
      [2, 'loop/T-1', 'open'],
    ]);
    // Pushed as verified (rebased onto base, which moved with the merge, and checked again there).
    const offered = (await remoteHead(bare, 'loop/T-1'))!;
    expect(offered).toBe(await git(root, 'rev-parse', 'loop/T-1'));
    expect(await git(root, 'show', `${offered}:fixed.txt`)).toBe(await git(root, 'show', `${latest}:fixed.txt`));
    expect(await git(root, 'diff', '--name-only', 'refs/remotes/origin/main', offered)).toBe('fixed.txt');
    expect(await counts(root)).toMatchObject({ verified: 1, merged: 0, lost: 0 });
    const h = await openFleet(root, fixIt, { env: githubEnv(github) });
    expect(h.fleet.task('T-1')?.pr).toMatchObject({ number: 2, state: 'open' });
    await h.session.close();
  });

  it('a teammate pushed on top of the last verified commit and squash-merged that head: the work is in, merged', {
    timeout: 180_000,
  }, async () => {
    const { root, bare } = await publishedTask(cleanups, github);
    const ours = await git(root, 'rev-parse', 'loop/T-1');
    const theirs = await commitOnRemote(bare, { 'NOTE.md': 'a teammate was here\n' }, 'teammate fix', 'loop/T-1');
    github.pushHead(1, theirs);
    await mergeOnRemote(bare, 'loop/T-1', 'squash');
    github.mergeOnForge(1);
    const pass = await syncPass(root, github);
    expect(pass.errors).toEqual([]);
    const task = (await stateOf(root)).tasks['T-1']!;
    expect(task.status).toBe('merged');
    expect(await git(root, 'rev-parse', 'refs/loopfleet/merged/T-1')).toBe(ours);
    expect(github.pulls).toHaveLength(1);
    expect(await counts(root)).toMatchObject({ verified: 0, merged: 1, lost: 0 });
  });
});
