import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { backlog, reopen, runFleet } from '../helpers/fleet-harness.js';
import { git, makeRepo, read, writeFiles } from '../helpers/git-repo.js';

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups) await c();
  cleanups = [];
});

/** The changed lines of a unified diff, without its file headers. */
const changed = (diff: string) => diff.split('\n').filter((l) => /^[-+]/.test(l) && !/^(---|\+\+\+) /.test(l));

const implement = ({ role, task }: { role: string; task: string }) =>
  role === 'implementer' ? { edits: { [`${task}.txt`]: `${task}\n` } } : {};

describe('a clean checkout after merging', () => {
  it('commits the tick (and the ids loopfleet wrote) with the merge, leaving nothing uncommitted', async () => {
    const r = await makeRepo({ 'BACKLOG.md': backlog('check: "true"', '- [ ] First\n- [ ] Second') });
    cleanups.push(r.cleanup);
    await runFleet(r.root, implement);
    // the run wrote the ids into the checkout
    expect(await git(r.root, 'status', '--porcelain')).toBe('M BACKLOG.md');
    const h = await reopen(r.root);
    await h.fleet.merge('T-1');
    expect(await git(r.root, 'status', '--porcelain')).toBe('');
    await h.fleet.merge('T-2');
    await h.session.close();
    expect(await git(r.root, 'status', '--porcelain')).toBe('');
    const committed = await git(r.root, 'show', 'main:BACKLOG.md');
    expect(committed).toContain('- [x] T-1 First');
    expect(committed).toContain('- [x] T-2 Second');
    // the merge commit changed BACKLOG.md only on the item lines
    const diff = await git(r.root, 'diff', 'main~1', 'main', '--', 'BACKLOG.md');
    expect(changed(diff)).toEqual(['-- [ ] T-2 Second', '+- [x] T-2 Second']);
  });

  it("keeps the person's uncommitted BACKLOG.md edit, uncommitted, and ticks their copy too", async () => {
    const r = await makeRepo({ 'BACKLOG.md': backlog('check: "true"', '- [ ] T-1 First\n- [ ] T-2 Second') });
    cleanups.push(r.cleanup);
    await runFleet(r.root, implement);
    const mine = (await read(r.root, 'BACKLOG.md')).replace(
      '- [ ] T-2 Second',
      '- [ ] T-2 Second\n  remember the edge case',
    );
    await writeFiles(r.root, { 'BACKLOG.md': `${mine}- [ ] An idea for later\n` });
    const h = await reopen(r.root);
    await h.fleet.merge('T-1');
    await h.session.close();
    expect(h.fleet.task('T-1')!.status).toBe('merged');
    const working = await read(r.root, 'BACKLOG.md');
    expect(working).toContain('- [x] T-1 First');
    expect(working).toContain('  remember the edge case');
    expect(working).toMatch(/- \[ \] T-3 An idea for later/);
    const committed = await git(r.root, 'show', 'main:BACKLOG.md');
    expect(committed).toContain('- [x] T-1 First');
    expect(committed).not.toContain('remember the edge case');
    expect(committed).not.toContain('An idea for later');
    // only the person's own edit is left uncommitted, and the backup of it is gone
    expect(await git(r.root, 'status', '--porcelain')).toBe('M BACKLOG.md');
    const diff = await git(r.root, 'diff', '--', 'BACKLOG.md');
    expect(changed(diff)).toEqual(['+  remember the edge case', '+- [ ] T-3 An idea for later']);
    expect(existsSync(join(r.root, '.loop-worktrees', 'BACKLOG.md.before-merge'))).toBe(false);
  });

  it('refuses, touching nothing, when BACKLOG.md has staged changes', async () => {
    const r = await makeRepo({ 'BACKLOG.md': backlog('check: "true"', '- [ ] T-1 First') });
    cleanups.push(r.cleanup);
    await runFleet(r.root, implement);
    await writeFiles(r.root, { 'BACKLOG.md': `${await read(r.root, 'BACKLOG.md')}- [ ] Staged idea\n` });
    await git(r.root, 'add', 'BACKLOG.md');
    const head = await git(r.root, 'rev-parse', 'main');
    const h = await reopen(r.root);
    const before = await read(r.root, 'BACKLOG.md');
    await expect(h.fleet.merge('T-1')).rejects.toThrow(/staged changes/);
    await h.session.close();
    expect(await git(r.root, 'rev-parse', 'main')).toBe(head);
    expect(await read(r.root, 'BACKLOG.md')).toBe(before);
    expect(h.fleet.task('T-1')!.status).toBe('verified');
  });
});
