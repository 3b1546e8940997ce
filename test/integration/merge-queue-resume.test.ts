import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { startModelServer, type RunningModelServer } from '../../src/demo/model-server.js';
import { demoScript } from '../../src/demo/scripts.js';
import { backlog, runFleet } from '../helpers/fleet-harness.js';
import { git, makeRepo } from '../helpers/git-repo.js';
import { readState } from '../helpers/state-file.js';
import { CLI } from '../helpers/paths.js';

/**
 * `--overnight --auto-merge` killed with SIGKILL while the merge queue lands — T-1 merged, T-2's re-check on
 * the new base running — and started again: the next run lands every task the first left verified, none
 * twice, none lost, and base's check passes.
 */

const KEY = 'merge-queue-resume-key';
const IDS = ['T-1', 'T-2', 'T-3'];
const FILES: Record<string, string> = { 'T-1': 'one.txt', 'T-2': 'two.txt', 'T-3': 'three.txt' };

let cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Waits for `path` to exist, the first run's own signal; a run that ended first is a failure. */
async function signalled(path: string, ended: () => boolean, out: () => string): Promise<void> {
  while (!existsSync(path)) {
    if (ended()) throw new Error(`the re-check never started; output:\n${out()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('an interrupted merge queue', () => {
  it('is resumed by the next --auto-merge run: every verified task lands once, and base’s check passes', {
    timeout: 180_000,
  }, async () => {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
    const server: RunningModelServer = await startModelServer({
      apiKeys: [KEY],
      script: demoScript(
        IDS.map((id) => ({ taskId: id, kind: 'pass' as const, edits: [{ path: FILES[id]!, content: `${id}\n` }] })),
        { chunkDelayMs: 1, delayMs: 1 },
      ),
    });
    cleanups.push(() => server.close());
    const signals = await mkdtemp(join(tmpdir(), 'lf-mq-resume-'));
    cleanups.push(() => rm(signals, { recursive: true, force: true }));
    // The check passes; run on a tree holding two tasks' files — only a re-check after another task has
    // landed — it first tells the test (its pid) and holds until the test lets re-checks through.
    const check = [
      'n=0; for f in one.txt two.txt three.txt; do [ ! -f "$f" ] || n=$((n + 1)); done',
      `if [ "$n" -ge 2 ] && [ ! -f '${signals}/released' ]; then`,
      `  echo $$ > '${signals}/rechecking.tmp' && mv '${signals}/rechecking.tmp' '${signals}/rechecking'`,
      '  exec sleep 600',
      'fi',
      'for f in one.txt two.txt three.txt; do [ ! -f "$f" ] || grep -q "^T-" "$f" || exit 1; done',
    ].join('\n');
    const repo = await makeRepo({
      'BACKLOG.md': backlog(
        'check: sh check.sh\nreview: false\nsandbox: off\nconcurrency: 3',
        IDS.map((id) => `- [ ] ${id} Write ${FILES[id]}`).join('\n'),
      ),
      'check.sh': `${check}\n`,
    });
    cleanups.push(repo.cleanup);
    const start = await git(repo.root, 'rev-parse', 'main');
    const env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/root',
      NO_COLOR: '1',
      ANTHROPIC_BASE_URL: server.url,
      ANTHROPIC_API_KEY: KEY,
    };

    const first = execa(process.execPath, [CLI, '--overnight', '--auto-merge'], {
      cwd: repo.root,
      env,
      extendEnv: false,
      reject: false,
    });
    let out = '';
    let ended = false;
    first.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
    void first.then(() => (ended = true));
    await signalled(
      join(signals, 'rechecking'),
      () => ended,
      () => out,
    );
    first.kill('SIGKILL');
    await first;
    // the re-check the dead run started is its own child: ended by its pid, then re-checks go through
    const recheck = Number((await readFile(join(signals, 'rechecking'), 'utf8')).trim());
    try {
      process.kill(recheck, 'SIGKILL');
    } catch {
      // already gone with its parent
    }
    await writeFile(join(signals, 'released'), '');

    const crashed = await readState(repo.root);
    // One task's merge is on base (the state may not say so yet: killed before its save, landing it again
    // must find it merged, not merge it twice); the one being re-checked, and any after it, are verified.
    const landedFirst = (await git(repo.root, 'log', '--first-parent', '--format=%s', `${start}..main`))
      .split('\n')
      .filter((subject) => subject.startsWith('Merge loop/'));
    expect(landedFirst.length).toBeGreaterThan(0);
    const left = IDS.filter((id) => crashed.tasks[id]?.status === 'verified');
    expect(left.length).toBeGreaterThan(0);
    console.info(
      `killed while landing: ${landedFirst.length} merged on base, ${left.length} verified left (${left.join(', ')})`,
    );

    const second = await execa(process.execPath, [CLI, '--overnight', '--auto-merge'], {
      cwd: repo.root,
      env,
      extendEnv: false,
      reject: false,
    });
    expect(second.exitCode, second.stdout + second.stderr).toBe(0);
    const done = await readState(repo.root);
    const counts = { verified: 0, merged: 0, lost: 0 };
    const merges = (await git(repo.root, 'log', '--first-parent', '--format=%s', `${start}..main`)).split('\n');
    for (const id of IDS) {
      if (done.tasks[id]?.status === 'verified') counts.verified++;
      if (done.tasks[id]?.status === 'merged') counts.merged++;
      const onBase = await git(repo.root, 'show', `main:${FILES[id]}`).catch(() => null);
      if (onBase !== id) counts.lost++;
      // landed once: one merge commit names it
      expect(
        merges.filter((s) => s.startsWith(`Merge loop/${id}:`)),
        id,
      ).toHaveLength(1);
    }
    expect(counts).toEqual({ verified: 0, merged: IDS.length, lost: 0 });
    expect(second.stdout).toMatch(/done: 0 verified, 3 merged/);
    // base's own check passes, and the person's checkout is clean
    expect((await execa('sh', ['check.sh'], { cwd: repo.root, reject: false })).exitCode).toBe(0);
    expect(await git(repo.root, 'status', '--porcelain')).toBe('');
  });

  it('a merge that reached base before the state was saved is marked merged by the next run, not merged again', {
    timeout: 120_000,
  }, async () => {
    const repo = await makeRepo({
      'BACKLOG.md': backlog('check: "true"\nreview: false\nsandbox: off', '- [ ] T-1 One\n- [ ] T-2 Two'),
    });
    cleanups.push(repo.cleanup);
    const writeOwn = ({ role, task }: { role: string; task: string }) =>
      role === 'implementer' ? { edits: { [`${task}.txt`]: `${task}\n` } } : {};
    const first = await runFleet(repo.root, writeOwn);
    expect(first.fleet.tasks().map((t) => t.status)).toEqual(['verified', 'verified']);
    // What a run killed between its merge commit and its save leaves: T-1 merged in git, verified in state.
    const start = await git(repo.root, 'rev-parse', 'main');
    await git(repo.root, 'merge', '--no-ff', '--quiet', '-m', 'Merge loop/T-1: T-1 One', 'loop/T-1');

    const second = await runFleet(repo.root, writeOwn, { autoMerge: true });
    expect(second.fleet.tasks().map((t) => t.status)).toEqual(['merged', 'merged']);
    const merges = (await git(repo.root, 'log', '--first-parent', '--format=%s', `${start}..main`)).split('\n');
    expect(merges.filter((m) => m.startsWith('Merge loop/T-1:'))).toHaveLength(1);
    expect(merges.filter((m) => m.startsWith('Merge loop/T-2:'))).toHaveLength(1);
    expect(await git(repo.root, 'show', 'main:T-2.txt')).toBe('T-2');
  });
});
