import { chmod, readFile, rename, rm, symlink, unlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { GitTrackedFiles } from '../../../src/adapters/git/tracked-files.js';
import { git, makeRepo } from '../../helpers/git-repo.js';

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups) await c();
  cleanups = [];
});

async function repo() {
  const r = await makeRepo({ 'src/lib.js': 'bad\n', 'src/deep/x.js': 'x\n', 'run.sh': 'echo\n', 'keep.txt': 'k\n' });
  cleanups.push(r.cleanup);
  await symlink('src/lib.js', join(r.root, 'link'));
  await git(r.root, 'add', 'link');
  await git(r.root, 'commit', '-q', '-m', 'link');
  return r.root;
}

describe('what a check did to the tracked files', () => {
  it('sees nothing when the check only read them and wrote untracked files', async () => {
    const root = await repo();
    const tracked = new GitTrackedFiles();
    const record = await tracked.record(root);
    expect(record.folders).toEqual([join(root, 'src'), join(root, 'src/deep')]);
    await readFile(join(root, 'src/lib.js'));
    await writeFile(join(root, 'src/new.js'), 'untracked\n');
    expect(await tracked.changes(root, record)).toEqual([]);
  });

  it('names content, mode and symlink changes, deletions, and a file rewritten and put back', async () => {
    const root = await repo();
    const tracked = new GitTrackedFiles();
    const record = await tracked.record(root);
    await writeFile(join(root, 'src/lib.js'), 'good\n');
    await writeFile(join(root, 'src/lib.js'), 'bad\n'); // put back, the same bytes
    const before = new Date(Date.now() - 60_000);
    await utimes(join(root, 'src/lib.js'), before, before); // and the modification time set back: the change time still moved
    await chmod(join(root, 'run.sh'), 0o755);
    await rm(join(root, 'src/deep/x.js'));
    await unlink(join(root, 'link'));
    await symlink('keep.txt', join(root, 'link'));
    await rename(join(root, 'keep.txt'), join(root, 'k2'));
    await rename(join(root, 'k2'), join(root, 'keep.txt'));
    expect(await tracked.changes(root, record)).toEqual([
      { path: 'keep.txt', kind: 'restored' },
      { path: 'link', kind: 'changed' },
      { path: 'run.sh', kind: 'changed' },
      { path: 'src/deep/x.js', kind: 'deleted' },
      { path: 'src/lib.js', kind: 'restored' },
    ]);
  });
});
