import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { backlog, runFleet } from '../helpers/fleet-harness.js';
import { git, makeRepo } from '../helpers/git-repo.js';

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups) await c();
  cleanups = [];
});

const PLAN = (what: string) => `1. Add ${what} to calc.js\n\n\`\`\`files\ncalc.js\n\`\`\``;

describe('tasks whose plans name the same file', () => {
  it('run one after the other: the second implements on a base that has the first, and both merge cleanly', { timeout: 90_000 }, async () => {
    const r = await makeRepo({ 'BACKLOG.md': backlog('check: "true"\nreview: false\nconcurrency: 2', '- [ ] T-1 One\n- [ ] T-2 Two'), 'calc.js': 'base\n' });
    cleanups.push(r.cleanup);
    const seenByTwo: string[] = [];
    const { fleet, model } = await runFleet(
      r.root,
      ({ role, task, request }) => {
        if (role === 'explorer') return task === 'T-1' ? { text: PLAN('one') } : { text: PLAN('two'), chunks: 3, delayMs: 150 };
        if (role !== 'implementer') return {};
        // The implementer edits the file as it finds it in its worktree.
        const now = readFileSync(join(request.workdir, 'calc.js'), 'utf8');
        if (task === 'T-2') seenByTwo.push(now);
        return { edits: { 'calc.js': `${now}${task === 'T-1' ? 'one' : 'two'}\n` } };
      },
      { autoMerge: true },
    );
    expect(fleet.task('T-1')!.status).toBe('merged');
    const two = fleet.task('T-2')!;
    expect(two.status).toBe('merged');
    // the first attempt stopped at the overlap (it uses up no attempt); the second implemented the kept plan
    expect(two.attempts.filter((a) => a.n > 0).map((a) => a.outcome)).toEqual(['verified']);
    expect(two.attempts.some((a) => a.outcome === 'interrupted' && /waiting: overlaps T-1 on calc.js/.test(a.reason ?? ''))).toBe(true);
    expect(model.calls.filter((c) => c.task === 'T-2').map((c) => c.role)).toEqual(['explorer', 'implementer']);
    expect(seenByTwo).toEqual(['base\none\n']);
    expect(await git(r.root, 'show', 'main:calc.js')).toBe('base\none\ntwo');
    expect((await git(r.root, 'log', '--format=%s', 'main')).split('\n').filter((s) => s.startsWith('Merge loop/'))).toHaveLength(2);
  });
});
