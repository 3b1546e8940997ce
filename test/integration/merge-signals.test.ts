import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { backlog, runFleet } from '../helpers/fleet-harness.js';
import { git, makeRepo } from '../helpers/git-repo.js';
import { readState } from '../helpers/state-file.js';
import { CLI } from '../helpers/paths.js';

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups) await c();
  cleanups = [];
});

/** Whether main holds the merge of loop/T-1, read from git alone. */
async function mergedInGit(root: string): Promise<boolean> {
  return (await git(root, 'log', '--format=%s', 'main')).split('\n').some((s) => s.startsWith('Merge loop/T-1:'));
}

describe('a signal during loopfleet merge', () => {
  it('never splits git from state: the merge finishes or never starts, and the lock is released', {
    timeout: 90_000,
  }, async () => {
    const outcomes = new Set<string>();
    // Signals at different moments after the lock is taken (the session is open, the merge about to run or
    // running), and one before the process is even up.
    for (const delayMs of [-1, 0, 40]) {
      const r = await makeRepo({ 'BACKLOG.md': backlog('check: "true"', '- [ ] T-1 One') });
      cleanups.push(r.cleanup);
      await runFleet(r.root, ({ role }) => (role === 'implementer' ? { edits: { 'one.txt': '1\n' } } : {}));
      const child = execa(process.execPath, [CLI, 'merge', 'T-1'], {
        cwd: r.root,
        reject: false,
        env: { NO_COLOR: '1' },
      });
      let exited = false;
      void Promise.resolve(child).finally(() => (exited = true));
      const lock = join(r.root, '.loop-worktrees', 'fleet.lock');
      if (delayMs < 0) child.kill('SIGTERM');
      else {
        while (!existsSync(lock) && !exited) await new Promise((done) => setTimeout(done, 2));
        await new Promise((done) => setTimeout(done, delayMs));
        child.kill('SIGTERM');
      }
      const result = await child;

      const state = await readState(r.root);
      const merged = await mergedInGit(r.root);
      expect(state.tasks['T-1'].status, `signal after ${delayMs} ms`).toBe(merged ? 'merged' : 'verified');
      expect(existsSync(join(r.root, '.loop-worktrees', 'fleet.lock')), `lock after ${delayMs} ms`).toBe(false);
      // an interrupted merge that went through says so with 130; one the signal pre-empted did nothing
      if (merged && result.exitCode !== 0) expect(result.exitCode).toBe(130);
      if (!merged) expect(await git(r.root, 'branch', '--list', 'loop/T-1')).toContain('loop/T-1');
      outcomes.add(`${merged ? 'merged' : 'untouched'}:${result.exitCode ?? result.signal}`);
    }
    // The run must have seen an interrupted merge that finished (exit 130), or the test proves nothing.
    expect([...outcomes].some((o) => o === 'merged:130')).toBe(true);
  });
});
