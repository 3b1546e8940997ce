/**
 * A folder kept as it is and put back, at the same path, as often as a test asks. What a fleet run leaves in
 * a repository (worktrees, state, git's worktree records) names absolute paths, so a copy elsewhere would not
 * be the same repository: {@link keepFolder} restores in place. Tests of one file run one after another, so a
 * file can run its expensive setup once and give every test the same starting point.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';

export interface KeptFolder {
  /** Puts the folder back exactly as it was kept: modes, times and links included; whatever was added is gone. */
  restore(): Promise<void>;
  /** Removes the kept copy (not the folder). */
  dispose(): Promise<void>;
}

export async function keepFolder(path: string): Promise<KeptFolder> {
  const kept = await mkdtemp(join(tmpdir(), 'loopfleet-kept-'));
  await execa('cp', ['-a', `${path}/.`, kept]);
  return {
    restore: async () => {
      await rm(path, { recursive: true, force: true });
      await mkdir(path);
      await execa('cp', ['-a', `${kept}/.`, path]);
    },
    dispose: () => rm(kept, { recursive: true, force: true }),
  };
}
