import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { renderReport } from '../../src/core/report/morning-report.js';
import { defaultConfig, fakeTask } from '../helpers/fake-fleet.js';
import { backlog, openFleet, runFleet } from '../helpers/fleet-harness.js';
import { makeRepo } from '../helpers/git-repo.js';

/*
 * A task worktree's content is the agent's: a nested repository there can set core.fsmonitor, which git
 * runs on `git status`. No message may send the person to run git inside one.
 */

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups) await c();
  cleanups = [];
});

describe('messages that do not lead into a trap', () => {
  it('a conflict that cannot be replayed offers a diff from the checkout, discard and retry — not the worktree', async () => {
    const r = await makeRepo({
      'BACKLOG.md': backlog('check: "true"\nreview: false', '- [ ] T-1 One\n- [ ] T-2 Two'),
      'shared.txt': 'original\n',
    });
    cleanups.push(r.cleanup);
    await runFleet(r.root, ({ role, task }) =>
      role === 'implementer'
        ? { edits: { 'shared.txt': `changed by ${task}\n`, ...(task === 'T-1' ? { 'later.txt': 'T-1\n' } : {}) } }
        : {},
    );
    const h = await openFleet(r.root, () => ({}));
    await h.fleet.merge('T-1');
    await h.fleet.merge('T-2');
    // base now has later.txt, which T-2's worktree holds untracked: the replay would overwrite it
    await writeFile(join(r.root, '.loop-worktrees', 'T-2', 'later.txt'), 'untracked\n');
    await h.fleet.retry('T-2');
    await h.session.close();
    const reason = h.fleet.task('T-2')!.reason!;
    expect(h.fleet.task('T-2')!.status).toBe('conflict');
    expect(reason).toMatch(
      /^rebase onto main conflicts and the branch could not be replayed onto it \(.+\); `git diff main...loop\/T-2` shows the change; `loopfleet discard T-2` then `loopfleet retry T-2` starts it again from main$/,
    );
    expect(reason).not.toContain('.loop-worktrees');
  });

  it("the report's hint for a failed task points at a diff of its branch, not at its worktree", () => {
    const task = fakeTask('T-1', { status: 'failed', branch: 'loop/T-1', reason: 'check `npm test` exited 1' });
    const counts = {
      queued: 0,
      running: 0,
      verified: 0,
      failed: 1,
      conflict: 0,
      merged: 0,
      discarded: 0,
      'awaiting-approval': 0,
    };
    const report = renderReport({
      repoRoot: '/repo',
      base: 'main',
      startedAt: '2026-01-01T00:00:00.000Z',
      endedAt: '2026-01-01T01:00:00.000Z',
      summary: {
        state: 'finished',
        counts,
        totals: { usage: task.usage, costUsd: 0, elapsedMs: 0, startedAt: null },
        stoppedBy: null,
      },
      tasks: [task],
      ran: new Set(['T-1']),
      config: defaultConfig(),
      sandboxed: true,
      exitCode: 1,
    });
    expect(report).toContain(
      '`git diff main...loop/T-1` shows the work so far; `loopfleet retry T-1` or `loopfleet discard T-1`',
    );
    expect(report).not.toContain('.loop-worktrees');
  });
});
