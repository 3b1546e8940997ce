import { afterEach, describe, expect, it } from 'vitest';
import { backlogRepo, openFleet } from '../../helpers/fleet-harness.js';
import { git, writeFiles } from '../../helpers/git-repo.js';
import { FakeForge } from '../../helpers/fake-forge.js';
import { bareOrigin, remoteHead, withForge } from '../../helpers/pr-remote.js';

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

const TEST_SH = `if grep -qx good value.txt; then echo ok; else echo 'value is not good'; exit 1; fi\n`;

describe('the merge queue checks every branch it lands, not only those it rebased', () => {
  it('a verified branch that moved after its check (base unchanged) is checked again, and sent back when it fails', {
    timeout: 60_000,
  }, async () => {
    const root = await backlogRepo(cleanups, 'check: sh test.sh\nreview: false', '- [ ] T-1 Add a note', {
      'test.sh': TEST_SH,
      'value.txt': 'good\n',
    });
    const h = await openFleet(root, ({ role }) => (role === 'implementer' ? { edits: { 'note.txt': 'note\n' } } : {}));
    cleanups.push(() => h.session.close());
    h.fleet.start();
    await h.fleet.whenIdle();
    expect(h.fleet.task('T-1')!.status).toBe('verified');
    const checked = await git(root, 'rev-parse', 'refs/loopfleet/checked/T-1');
    expect(checked).toBe(await git(root, 'rev-parse', 'loop/T-1'));

    // Someone commits onto the branch after it was checked; base has not moved, so no rebase happens.
    const worktree = h.fleet.worktreeOf('T-1');
    await writeFiles(worktree, { 'value.txt': 'bad\n' });
    await git(worktree, 'commit', '--quiet', '-am', 'a later commit nobody checked');
    const before = await git(root, 'rev-parse', 'main');
    const logs: string[] = [];
    h.fleet.events.on('log', (e) => logs.push(e.message));

    const result = await h.fleet.mergeAll();

    expect(result.merged).toEqual([]);
    expect(result.sentBack.map((s) => s.id)).toEqual(['T-1']);
    expect(await git(root, 'rev-parse', 'main')).toBe(before);
    expect(logs).toContain('not checked here at this commit; checking it before it lands');
  });

  it("a person's merge (m) of a branch that moved after its check checks it first: a failing tip is sent back, a passing one merged", {
    timeout: 60_000,
  }, async () => {
    const root = await backlogRepo(
      cleanups,
      'check: sh test.sh\nreview: false',
      '- [ ] T-1 Add a note\n- [ ] T-2 Add another',
      {
        'test.sh': TEST_SH,
        'value.txt': 'good\n',
      },
    );
    const h = await openFleet(root, ({ role, task }) =>
      role === 'implementer' ? { edits: { [`${task}.txt`]: 'note\n' } } : {},
    );
    cleanups.push(() => h.session.close());
    h.fleet.start();
    await h.fleet.whenIdle();
    const logs: string[] = [];
    h.fleet.events.on('log', (e) => logs.push(`${e.id} ${e.message}`));
    // T-1's branch gets a commit that breaks the suite; T-2's one that keeps it passing.
    for (const [id, value] of [
      ['T-1', 'bad'],
      ['T-2', 'good'],
    ] as const) {
      const worktree = h.fleet.worktreeOf(id);
      await writeFiles(worktree, { 'value.txt': `${value}\n`, 'later.txt': `${id}\n` });
      await git(worktree, 'add', '-A');
      await git(worktree, 'commit', '--quiet', '-m', 'a later commit nobody checked');
    }
    const before = await git(root, 'rev-parse', 'main');

    await h.fleet.merge('T-1');
    // Sent back for a new attempt (which the running fleet starts at once), not merged.
    expect(h.fleet.task('T-1')!.status).not.toBe('merged');
    expect(logs.some((l) => /^T-1 merge: before it lands: check `sh test\.sh` exited 1/.test(l))).toBe(true);
    expect(await git(root, 'rev-parse', 'main')).toBe(before);

    await h.fleet.merge('T-2');
    expect(h.fleet.task('T-2')!.status).toBe('merged');
    expect(await git(root, 'show', 'main:later.txt')).toBe('T-2');
    expect(logs).toContain('T-1 not checked here at this commit; checking it before it is merged');
    expect(logs).toContain('T-2 not checked here at this commit; checking it before it is merged');
  });

  it('under land: pr, m on a branch that moved after its check pushes nothing when the tip fails its checks', {
    timeout: 60_000,
  }, async () => {
    const root = await backlogRepo(cleanups, 'land: pr\ncheck: sh test.sh\nreview: false', '- [ ] T-1 Add a note', {
      'test.sh': TEST_SH,
      'value.txt': 'good\n',
    });
    const bare = await bareOrigin(root, cleanups);
    const forge = new FakeForge((branch) => remoteHead(bare, branch));
    const h = await openFleet(root, ({ role }) => (role === 'implementer' ? { edits: { 'note.txt': 'note\n' } } : {}), {
      services: withForge(forge),
    });
    cleanups.push(() => h.session.close());
    h.fleet.start();
    await h.fleet.whenIdle();
    expect(h.fleet.task('T-1')!.status).toBe('verified');
    const pushed = await remoteHead(bare, 'loop/T-1');
    expect(pushed).toBe(await git(root, 'rev-parse', 'loop/T-1'));
    const logs: string[] = [];
    h.fleet.events.on('log', (e) => logs.push(`${e.id} ${e.message}`));

    const worktree = h.fleet.worktreeOf('T-1');
    await writeFiles(worktree, { 'value.txt': 'bad\n' });
    await git(worktree, 'commit', '--quiet', '-am', 'a later commit nobody checked');
    await h.fleet.merge('T-1');

    expect(await remoteHead(bare, 'loop/T-1')).toBe(pushed);
    expect(logs.some((l) => /^T-1 merge: before it lands: check `sh test\.sh` exited 1/.test(l))).toBe(true);
  });
});
