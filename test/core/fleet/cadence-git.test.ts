import { afterEach, describe, expect, it } from 'vitest';
import { backlog, runFleet } from '../../helpers/fleet-harness.js';
import { git, makeRepo, read } from '../../helpers/git-repo.js';

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups) await c();
  cleanups = [];
});

describe('a merged recurring task on a real repository', () => {
  it('is merged into base without ticking its item, in the merge commit or the checkout; a plain task is ticked', async () => {
    const r = await makeRepo({
      'BACKLOG.md': backlog(
        'check: "true"\nreview: false\nconcurrency: 1',
        '- [ ] T-1 Refresh the data\n  every: 1d\n- [ ] T-2 Once',
      ),
    });
    cleanups.push(r.cleanup);
    const { fleet } = await runFleet(
      r.root,
      ({ role, task }) =>
        role === 'implementer' ? { edits: { [`${task.includes('T-1') ? 'one' : 'two'}.txt`]: 'x\n' } } : {},
      { autoMerge: true },
    );
    expect(fleet.task('T-1')).toMatchObject({ status: 'queued', branch: null });
    expect(fleet.task('T-1')!.runs!.map((x) => x.outcome)).toEqual(['merged']);
    expect(fleet.task('T-2')!.status).toBe('merged');
    expect(await read(r.root, 'one.txt')).toBe('x\n');
    const committed = await git(r.root, 'show', 'main:BACKLOG.md');
    const working = await read(r.root, 'BACKLOG.md');
    for (const text of [committed, working]) {
      expect(text).toContain('- [ ] T-1 Refresh the data');
      expect(text).toContain('- [x] T-2 Once');
    }
  });
});
