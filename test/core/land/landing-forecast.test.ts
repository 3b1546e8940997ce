import { afterEach, describe, expect, it } from 'vitest';
import { backlog, reopen, runFleet } from '../../helpers/fleet-harness.js';
import { makeRepo } from '../../helpers/git-repo.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('the forecast on a real fleet', () => {
  it('records with whom, the files and the hunks; when base moves, predicts again against it', {
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

    const h = await reopen(r.root);
    try {
      const one = h.fleet.task('T-1')!;
      expect(one.conflictsWith).toEqual(['T-2']);
      expect(one.conflicts!.map((c) => [c.with, c.files])).toEqual([['T-2', ['shared.txt']]]);
      const [hunk] = one.conflicts![0]!.hunks;
      expect(hunk!.file).toBe('shared.txt');
      expect(hunk!.hunk).toMatch(/^<<<<<<< [^\n]*\nchanged by T-1\n=======\nchanged by T-2\n>>>>>>> /);
      expect(h.fleet.task('T-3')!.conflicts ?? []).toEqual([]);

      await h.fleet.merge('T-1');
      // base moved: T-2 now conflicts with base, no longer with T-1
      await until(() => h.fleet.task('T-2')!.conflictsWith?.[0] === 'main', 'the forecast against the new base');
      const two = h.fleet.task('T-2')!;
      expect(two.conflictsWith).toEqual(['main']);
      expect(two.conflicts!.map((c) => [c.with, c.files])).toEqual([['main', ['shared.txt']]]);
      expect(two.conflicts![0]!.hunks[0]!.hunk).toContain('changed by T-2');
    } finally {
      await h.session.close();
    }
  });
});
