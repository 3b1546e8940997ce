import { describe, expect, it } from 'vitest';
import { inCheckTree } from '../../../src/core/verify/hidden-tests.js';
import type { TaskSpec } from '../../../src/domain/types.js';
import { FakeGit } from '../../helpers/fake-git.js';
import { FakeScratchTrees } from '../../helpers/fake-verification.js';

const spec = (hiddenTests?: Record<string, string>): TaskSpec => ({
  id: 'E-1',
  title: 'Add neg',
  line: 1,
  done: false,
  description: '',
  after: [],
  files: [],
  ...(hiddenTests === undefined ? {} : { hiddenTests }),
});

function setup() {
  const git = new FakeGit('/repo', { 'src/math.js': 'base\n' });
  // The agent's commit: its own test at the hidden path, one that cannot fail.
  const commit = git.commitOn('main', { 'src/math.js': 'agent\n', 'test/neg.test.js': 'always passes\n' });
  const scratch = new FakeScratchTrees(git);
  const prepared: string[] = [];
  const deps = {
    scratch,
    prepare: async (dir: string) => {
      prepared.push(dir);
    },
    commit: async () => commit,
  };
  return { git, scratch, deps, prepared };
}

describe('inCheckTree', () => {
  it('runs the checks of a task without hidden tests in its own worktree, making no scratch checkout', async () => {
    const { scratch, deps } = setup();
    const dir = await inCheckTree(spec(), '/repo/.loop-worktrees/T-1', deps, async (d) => d);
    expect(dir).toBe('/repo/.loop-worktrees/T-1');
    expect(scratch.made).toEqual([]);
    expect(await inCheckTree(spec({}), 'w', deps, async (d) => d)).toBe('w');
  });

  it("runs them in a scratch checkout of the commit where the hidden version replaces the agent's test", async () => {
    const { git, scratch, deps, prepared } = setup();
    const seen = await inCheckTree(spec({ 'test/neg.test.js': 'hidden\n' }), '/wt', deps, async (dir) => ({
      dir,
      test: git.files(dir).get('test/neg.test.js'),
      code: git.files(dir).get('src/math.js'),
    }));
    expect(seen).toEqual({ dir: '/repo/.loop-worktrees/.hidden-E-1', test: 'hidden\n', code: 'agent\n' });
    expect(prepared).toEqual(['/repo/.loop-worktrees/.hidden-E-1']);
    expect(scratch.made).toEqual(['hidden-E-1']);
    // Removed afterwards: the hidden file lives nowhere once the checks end.
    expect(git.hasWorktree('/repo/.loop-worktrees/.hidden-E-1')).toBe(false);
  });

  it('removes the scratch checkout when the checks throw, and refuses a branch that resolves to nothing', async () => {
    const { git, deps } = setup();
    await expect(
      inCheckTree(spec({ 't.js': 'x' }), '/wt', deps, async () => {
        throw new Error('check crashed');
      }),
    ).rejects.toThrow('check crashed');
    expect(git.hasWorktree('/repo/.loop-worktrees/.hidden-E-1')).toBe(false);
    await expect(
      inCheckTree(spec({ 't.js': 'x' }), '/wt', { ...deps, commit: async () => null }, async () => 0),
    ).rejects.toThrow(/branch of E-1 does not resolve/);
  });
});
