import { lstat, mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { WORK_DIR } from '../../domain/layout.js';
import type { ScratchTrees } from '../../ports/verification.js';
import { GitExec, IDENTITY_ENV, assertRefName, fields, gitEnvironment } from './exec.js';
import type { SimpleGitAdapter } from './simple-git.js';

/** Letters, digits, '-', '#' (a tracker task's id, `gh#12`) and single dots (a part's id, `T-7.1`), never `..`. */
const NAME_RE = /^(?!.*\.\.)[A-Za-z0-9][A-Za-z0-9.#-]*$/;

/** A path {@link GitScratchTrees.overlay} writes: relative, `/`-separated, no `.`, `..`, `.git` or empty part. */
export function isOverlayPath(relative: string): boolean {
  return (
    !path.posix.isAbsolute(relative) &&
    !relative.split('/').some((p) => p === '' || p === '.' || p === '..' || p === '.git' || p.includes('\\'))
  );
}

/**
 * Scratch worktrees for baselines and proofs: detached, at `.loop-worktrees/.<name>` (a dot name is never a
 * task id, so prune and task worktrees never meet them), created and removed only here.
 */
export class GitScratchTrees implements ScratchTrees {
  readonly #git: SimpleGitAdapter;
  readonly #env = gitEnvironment(IDENTITY_ENV);

  constructor(git: SimpleGitAdapter) {
    this.#git = git;
  }

  #dir(name: string): string {
    if (!NAME_RE.test(name))
      throw new Error(`scratch worktree name '${name}' must be letters, digits, '-', '#' and single dots`);
    return path.join(this.#git.root, WORK_DIR, `.${name}`);
  }

  async mergeBase(worktree: string, ref: string): Promise<string> {
    assertRefName(ref, 'ref');
    return (await new GitExec(worktree, this.#env).out(['merge-base', 'HEAD', ref])).trim();
  }

  async changedFiles(from: string, to: string): Promise<string[]> {
    assertRefName(from, 'commit');
    assertRefName(to, 'commit');
    return fields(
      await new GitExec(this.#git.root, this.#env).out(['diff', '--name-only', '--no-renames', '-z', from, to, '--']),
    );
  }

  async create(name: string, commit: string): Promise<string> {
    const dir = this.#dir(name);
    await this.#git.ensureExcluded(`/${WORK_DIR}/`);
    await this.#git.addWorktreeDetached(dir, commit);
    return dir;
  }

  async restore(dir: string, commit: string, paths: readonly string[]): Promise<void> {
    assertRefName(commit, 'commit');
    if (paths.length === 0) return;
    const git = new GitExec(dir, this.#env);
    const there = new Set(
      (await git.out(['ls-tree', '-r', '-z', '--name-only', commit, '--', ...paths]))
        .split('\0')
        .filter((p) => p !== ''),
    );
    const present = paths.filter((p) => there.has(p));
    const absent = paths.filter((p) => !there.has(p));
    if (present.length > 0) await git.run(['checkout', commit, '--', ...present]);
    if (absent.length > 0) await git.run(['rm', '-q', '-f', '--ignore-unmatch', '--', ...absent]);
  }

  /**
   * Plain writes, not git: the files never enter an object store an agent's later attempt could read. Each
   * folder on the way that is not a real folder (a link an agent committed, a file) is removed and made a
   * folder, and whatever is at the path itself is removed first; nothing else runs in a scratch worktree
   * meanwhile, so nothing can put a link back between the look and the write.
   */
  async overlay(dir: string, files: Readonly<Record<string, string>>): Promise<void> {
    for (const [relative, content] of Object.entries(files)) {
      if (!isOverlayPath(relative))
        throw new Error(`overlay path '${relative}' must be relative, inside the worktree and outside .git`);
      const parts = relative.split('/');
      let at = dir;
      for (const part of parts.slice(0, -1)) {
        at = path.join(at, part);
        const s = await lstat(at).catch(() => null);
        if (s?.isDirectory() === true) continue;
        if (s !== null) await rm(at, { force: true });
        await mkdir(at);
      }
      const file = path.join(dir, ...parts);
      await rm(file, { recursive: true, force: true });
      await writeFile(file, content, { flag: 'wx' });
    }
  }

  async remove(dir: string): Promise<void> {
    if (path.dirname(dir) !== path.join(this.#git.root, WORK_DIR) || !path.basename(dir).startsWith('.')) {
      throw new Error(`${dir} is not a scratch worktree`);
    }
    await this.#git.removeWorktree(dir, true);
  }
}
