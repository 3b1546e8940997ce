import { afterEach, describe, expect, it } from 'vitest';
import { SimpleGitAdapter } from '../../../src/adapters/git/simple-git.js';
import { git, makeRepo } from '../../helpers/git-repo.js';

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups) await c();
  cleanups = [];
});

describe('where the person’s git configuration reaches into the repository', () => {
  it('lists included files inside the repository, relative to the file that includes them, and core.hooksPath', async () => {
    const r = await makeRepo({ 'team.gitconfig': '[include]\n\tpath = config/more.inc\n', 'config/more.inc': '' });
    cleanups.push(r.cleanup);
    await git(r.root, 'config', 'include.path', '../team.gitconfig');
    await git(r.root, 'config', 'includeIf.gitdir:/nowhere/.path', '../config/cond.inc');
    await git(r.root, 'config', '--add', 'include.path', '/etc/outside.gitconfig');
    await git(r.root, 'config', 'core.hooksPath', '.husky');
    expect(await new SimpleGitAdapter(r.root).configReach()).toEqual({
      includes: ['config/cond.inc', 'config/more.inc', 'team.gitconfig'],
      hooksPath: '.husky',
    });
  });

  it('is empty when nothing points inside', async () => {
    const r = await makeRepo({ 'a.txt': 'a\n' });
    cleanups.push(r.cleanup);
    await git(r.root, 'config', 'core.hooksPath', '/usr/share/hooks');
    expect(await new SimpleGitAdapter(r.root).configReach()).toEqual({ includes: [], hooksPath: null });
  });
});
