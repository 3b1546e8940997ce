import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { statusRows } from '../../src/commands/status.js';
import { findRepo } from '../../src/commands/repo.js';
import { backlog, reopen, runFleet } from '../helpers/fleet-harness.js';
import { git, makeRepo } from '../helpers/git-repo.js';
import { readState } from '../helpers/state-file.js';
import { CLI } from '../helpers/paths.js';

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups) await c();
  cleanups = [];
});

/** one.txt and four.txt each pass alone; together they break the check. */
const CLASH_CHECK = "if [ -f one.txt ] && [ -f four.txt ]; then echo 'one.txt and four.txt clash'; exit 1; fi";
const ITEMS = '- [ ] T-1 One\n- [ ] T-2 Two\n- [ ] T-3 Three\n- [ ] T-4 Four';
const WORDS: Record<string, string> = { 'T-1': 'one', 'T-2': 'two', 'T-3': 'three', 'T-4': 'four' };
const writeOwnFile = ({ role, task }: { role: string; task: string }) =>
  role === 'implementer' ? { edits: { [`${WORDS[task]}.txt`]: `${task}\n` } } : {};

async function fourVerified(): Promise<string> {
  const r = await makeRepo({
    'BACKLOG.md': backlog('check: sh check.sh\nreview: false', ITEMS),
    'check.sh': `${CLASH_CHECK}\n`,
  });
  cleanups.push(r.cleanup);
  const { fleet } = await runFleet(r.root, writeOwnFile);
  expect(fleet.tasks().map((t) => t.status)).toEqual(['verified', 'verified', 'verified', 'verified']);
  return r.root;
}

/** Every commit base went through since `from`, first parents only, oldest first. */
async function baseHistory(root: string, from: string): Promise<string[]> {
  return (await git(root, 'rev-list', '--first-parent', '--reverse', `${from}..main`))
    .split('\n')
    .filter((x) => x !== '');
}

describe('the merge queue', () => {
  it('names a worktree left dirty as a dirty worktree, with its files, never as a conflict', {
    timeout: 120_000,
  }, async () => {
    const r = await makeRepo({ 'BACKLOG.md': backlog('check: "true"\nreview: false', '- [ ] T-1 One\n- [ ] T-2 Two') });
    cleanups.push(r.cleanup);
    await runFleet(r.root, writeOwnFile);
    // T-1 lands first and moves base, so T-2's branch must be rebased: its worktree has an edit no commit holds.
    const worktree = (await git(r.root, 'worktree', 'list', '--porcelain'))
      .split('\n')
      .find((l) => l.startsWith('worktree ') && l.endsWith('T-2'))!
      .slice(9);
    writeFileSync(join(worktree, 'two.txt'), 'edited by hand\n');
    const h = await reopen(r.root);
    const result = await h.fleet.mergeAll();
    await h.session.close();

    expect(result.merged).toEqual(['T-1']);
    expect(result.sentBack).toEqual([{ id: 'T-2', reason: 'dirty worktree: two.txt' }]);
    expect(h.fleet.task('T-2')!.reason).not.toMatch(/conflict/);
    expect(h.fleet.task('T-2')!.reason).toContain('dirty worktree: two.txt');
  });

  it('lands each branch on top of the last, re-checked: base never receives a combination that fails', {
    timeout: 120_000,
  }, async () => {
    const root = await fourVerified();
    const start = await git(root, 'rev-parse', 'main');
    const h = await reopen(root);
    const result = await h.fleet.mergeAll();
    await h.session.close();

    expect(result.merged).toEqual(['T-1', 'T-2', 'T-3']);
    expect(result.sentBack.map((s) => s.id)).toEqual(['T-4']);
    const history = await baseHistory(root, start);
    expect(history).toHaveLength(3);
    for (const commit of history) {
      const files = (await git(root, 'ls-tree', '--name-only', commit)).split('\n');
      expect(files.includes('one.txt') && files.includes('four.txt'), `base at ${commit}`).toBe(false);
    }
    const four = h.fleet.task('T-4')!;
    expect(four.status).toBe('queued');
    expect(four.reason).toMatch(/sent back by the merge queue: .*check `sh check.sh`/);
    expect(four.attempts.at(-1)!.evidence).toContain('one.txt and four.txt clash');
    // the checkout is clean and BACKLOG.md ticks the three that landed, in the commits themselves
    expect(await git(root, 'status', '--porcelain')).toBe('');
    expect(await git(root, 'show', 'main:BACKLOG.md')).toMatch(/- \[x\] T-3 Three\n- \[ \] T-4 Four/);
  });

  it('predicts which verified branches conflict, in status --json, before anything is merged', {
    timeout: 60_000,
  }, async () => {
    const r = await makeRepo({
      'BACKLOG.md': backlog('check: "true"\nreview: false', '- [ ] T-1 One\n- [ ] T-2 Two\n- [ ] T-3 Three'),
      'shared.txt': 'original\n',
    });
    cleanups.push(r.cleanup);
    await runFleet(r.root, ({ role, task }) =>
      role !== 'implementer'
        ? {}
        : {
            edits:
              task === 'T-3'
                ? ({ 'other.txt': 'x\n' } as Record<string, string>)
                : { 'shared.txt': `changed by ${task}\n` },
          },
    );
    const head = await git(r.root, 'rev-parse', 'main');
    const rows = await statusRows(await findRepo(r.root));
    expect(rows.map((row) => [row.id, row.status, row.conflictsWith])).toEqual([
      ['T-1', 'verified', ['T-2']],
      ['T-2', 'verified', ['T-1']],
      ['T-3', 'verified', []],
    ]);
    expect(await git(r.root, 'rev-parse', 'main')).toBe(head);
    const table = await execa(process.execPath, [CLI, 'status'], { cwd: r.root, env: { NO_COLOR: '1' } });
    expect(table.stdout).toMatch(/T-1 .*⚠ conflicts with T-2/);
  });

  it('turns a conflict into work: the branch is replayed onto base with markers, a new attempt resolves them, and it lands', {
    timeout: 120_000,
  }, async () => {
    const r = await makeRepo({
      'BACKLOG.md': backlog('check: sh check.sh\nreview: false', '- [ ] T-1 One\n- [ ] T-2 Two'),
      'shared.txt': 'top\noriginal\nbottom\n',
      'check.sh': "! grep -q '^<<<<<<<' shared.txt\n",
    });
    cleanups.push(r.cleanup);
    await runFleet(r.root, ({ role, task }) =>
      role === 'implementer' ? { edits: { 'shared.txt': `top\nchanged by ${task}\nbottom\n` } } : {},
    );
    const h = await reopen(r.root);
    const queued = await h.fleet.mergeAll();
    await h.session.close();
    expect(queued.merged).toEqual(['T-1']);
    expect(queued.sentBack).toEqual([{ id: 'T-2', reason: 'conflicts with the new base in shared.txt' }]);
    const tip = await git(r.root, 'rev-parse', 'refs/loopfleet/replayed/T-2');
    expect(await git(r.root, 'show', `${tip}:shared.txt`)).toBe('top\nchanged by T-2\nbottom');
    expect(await git(r.root, 'rev-parse', 'loop/T-2')).toBe(await git(r.root, 'rev-parse', 'main'));

    // The next attempt finds the markers in its worktree, and is told where they are.
    const seen: string[] = [];
    const again = await runFleet(r.root, ({ role, request }) => {
      if (role !== 'implementer') return {};
      seen.push(readFileSync(join(request.workdir, 'shared.txt'), 'utf8'));
      expect(request.prompt).toContain('Conflicts in: shared.txt');
      return { edits: { 'shared.txt': 'top\nchanged by T-1\nchanged by T-2\nbottom\n' } };
    });
    expect(seen).toEqual(['top\n<<<<<<< main\nchanged by T-1\n=======\nchanged by T-2\n>>>>>>> loop/T-2\nbottom\n']);
    expect(again.fleet.task('T-2')!.status).toBe('verified');
    const landed = await reopen(r.root);
    expect((await landed.fleet.mergeAll()).merged).toEqual(['T-2']);
    await landed.session.close();
    expect(await git(r.root, 'show', 'main:shared.txt')).toBe('top\nchanged by T-1\nchanged by T-2\nbottom');
    // no commit base ever received holds a marker line
    expect(await git(r.root, 'log', '-G^<<<<<<<', '--format=%h', 'main')).toBe('');
    expect(await git(r.root, 'status', '--porcelain')).toBe('');
  });

  it('an attempt that leaves a conflict marker is refused by the guard: no marker reaches a commit', {
    timeout: 120_000,
  }, async () => {
    const r = await makeRepo({
      'BACKLOG.md': backlog('check: "true"\nreview: false\ngates:\n  attempts: 2', '- [ ] T-1 One\n- [ ] T-2 Two'),
      'shared.txt': 'original\n',
    });
    cleanups.push(r.cleanup);
    await runFleet(r.root, ({ role, task }) =>
      role === 'implementer' ? { edits: { 'shared.txt': `changed by ${task}\n` } } : {},
    );
    const h = await reopen(r.root);
    expect((await h.fleet.mergeAll()).sentBack.map((s) => s.id)).toEqual(['T-2']);
    await h.session.close();
    // A lazy implementer writes nothing: the markers replay left are all the change there is.
    const again = await runFleet(r.root, () => ({}));
    const t2 = again.fleet.task('T-2')!;
    expect(t2.status).toBe('failed');
    expect(t2.attempts.at(-1)!.reason).toMatch(/conflict marker/);
    expect(await git(r.root, 'log', '-G^<<<<<<<', '--format=%h', '--all')).toBe('');
  });

  it('stopped by SIGTERM, leaves base at a merge that passed, state matching git, and no lock', {
    timeout: 120_000,
  }, async () => {
    const root = await fourVerified();
    const start = await git(root, 'rev-parse', 'main');
    const child = execa(process.execPath, [CLI, 'merge', '--all'], {
      cwd: root,
      reject: false,
      env: { NO_COLOR: '1' },
    });
    let stopped = false;
    child.stdout?.on('data', (chunk: Buffer) => {
      if (!stopped && /T-1 merged|merge queue:/.test(String(chunk))) {
        stopped = true;
        child.kill('SIGTERM');
      }
    });
    const result = await child;
    expect(stopped).toBe(true);
    expect(result.exitCode).toBe(130);
    expect(existsSync(join(root, '.loop-worktrees', 'fleet.lock'))).toBe(false);
    const state = await readState(root);
    const merges = (await git(root, 'log', '--format=%s', `${start}..main`))
      .split('\n')
      .filter((s) => s.startsWith('Merge loop/'));
    for (const id of ['T-1', 'T-2', 'T-3', 'T-4']) {
      const inGit = merges.some((s) => s.startsWith(`Merge loop/${id}:`));
      expect(state.tasks[id].status === 'merged', `${id}`).toBe(inGit);
    }
    // without the stop, T-1, T-2 and T-3 would all have landed
    expect(merges.length).toBeLessThan(3);
    expect(result.stdout).toMatch(/not reached: .*T-3/);
    expect(await git(root, 'status', '--porcelain')).toBe('');
  });
});
