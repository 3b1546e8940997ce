import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import type { FleetServices } from '../../src/core/fleet/fleet.js';
import type { ForgePort } from '../../src/ports/forge.js';
import { GIT_ENV, git } from './git-repo.js';

/** A bare repository in a temp folder, added as `origin` to `root` with `main` pushed; removed on cleanup. */
export async function bareOrigin(root: string, cleanups: Array<() => Promise<void>>): Promise<string> {
  const bare = await mkdtemp(join(tmpdir(), 'loopfleet-remote-'));
  cleanups.push(() => rm(bare, { recursive: true, force: true }));
  await git(bare, 'init', '--quiet', '--bare', '--initial-branch=main');
  await git(root, 'remote', 'add', 'origin', bare);
  await git(root, 'push', '--quiet', 'origin', 'main');
  return bare;
}

/** The commit `branch` has on the bare remote now, null when it has none. */
export async function remoteHead(bare: string, branch: string): Promise<string | null> {
  const r = await execa('git', ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`], {
    cwd: bare,
    reject: false,
  });
  return r.exitCode === 0 ? r.stdout.trim() : null;
}

/** A person's commit on the remote's `branch` (a clone, a commit, a push), as a teammate would make it. */
export async function commitOnRemote(
  bare: string,
  files: Record<string, string>,
  message: string,
  branch = 'main',
): Promise<string> {
  const clone = await mkdtemp(join(tmpdir(), 'loopfleet-clone-'));
  try {
    await execa('git', ['clone', '--quiet', '--branch', branch, bare, clone], { env: { ...process.env, ...GIT_ENV } });
    const { writeFiles } = await import('./git-repo.js');
    await writeFiles(clone, files);
    await git(clone, 'add', '-A');
    await git(clone, 'commit', '--quiet', '-m', message);
    await git(clone, 'push', '--quiet', 'origin', `HEAD:${branch}`);
    return await git(clone, 'rev-parse', 'HEAD');
  } finally {
    await rm(clone, { recursive: true, force: true });
  }
}

/** The merge a forge makes: `branch` merged into main on the remote with a merge commit (or squashed). */
export async function mergeOnRemote(bare: string, branch: string, how: 'merge' | 'squash' = 'merge'): Promise<string> {
  const clone = await mkdtemp(join(tmpdir(), 'loopfleet-clone-'));
  try {
    await execa('git', ['clone', '--quiet', bare, clone], { env: { ...process.env, ...GIT_ENV } });
    await git(clone, 'fetch', '--quiet', 'origin', `refs/heads/${branch}:refs/remotes/origin/${branch}`);
    if (how === 'merge') await git(clone, 'merge', '--quiet', '--no-ff', '-m', `Merge ${branch}`, `origin/${branch}`);
    else {
      await git(clone, 'merge', '--quiet', '--squash', `origin/${branch}`);
      await git(clone, 'commit', '--quiet', '-m', `${branch} (squashed)`);
    }
    await git(clone, 'push', '--quiet', 'origin', 'HEAD:main');
    return await git(clone, 'rev-parse', 'HEAD');
  } finally {
    await rm(clone, { recursive: true, force: true });
  }
}

/** The services of a session with `forge` as its forge, on the remote `origin`. */
export function withForge(forge: ForgePort): (s: FleetServices) => FleetServices {
  return (s) => ({ ...s, forge: { forge, remote: 'origin' } });
}
