/**
 * GitPort on simple-git. One instance is bound to one repository's top-level folder.
 *
 * Invariants:
 * - worktrees are only ever created, committed in or removed below `<root>/.loop-worktrees/`;
 * - nothing here deletes a folder it did not create, or touches uncommitted work of the main checkout;
 * - every git failure surfaces as a GitCommandError naming the command and quoting git's stderr.
 */
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { RefusedError } from '../../domain/errors.js';
import { MERGE_BACKUP_NAME, WORK_DIR } from '../../domain/layout.js';
import type {
  BlobText,
  ConfigReach,
  ConflictForecast,
  ForkChanges,
  DiffEntry,
  DiffSummary,
  GitPort,
  MergeFileEdit,
  MergeResult,
  PushResult,
  RemoteAuth,
  SnapshotCommit,
  SnapshotSizeLimits,
  WorktreeInfo,
} from '../../ports/git.js';
import * as remotes from './remote.js';
import { commitSnapshot, diffEntries, diffNumbers, readBlob, readPatch } from './commit.js';
import { configReach } from './config-facts.js';
import { execa } from 'execa';
import {
  GitCommandError,
  GitExec,
  IDENTITY_ENV,
  assertRefName,
  gitEnvironment,
  hardeningArgs,
  parseNumstat,
} from './exec.js';
import { mergeBranch } from './merge.js';
import { changesSinceFork, forecastConflicts } from './forecast.js';
import { replayOnto } from './replay.js';
import { rebaseOnto } from './rebase.js';
import { exists } from '../fs/paths.js';
import { parseWorktreeList, taskWorktreePath } from './worktrees.js';

export class SimpleGitAdapter implements GitPort {
  readonly root: string;
  readonly #env = gitEnvironment(IDENTITY_ENV);
  readonly #execs = new Map<string, GitExec>();
  #commonDir: Promise<string> | undefined;
  #excludeQueue: Promise<void> = Promise.resolve();

  constructor(root: string) {
    this.root = realpathSync.native(path.resolve(root));
  }

  /** git bound to `dir`; instances are cached, they hold no process */
  #at(dir: string = this.root): GitExec {
    let exec = this.#execs.get(dir);
    if (!exec) {
      exec = new GitExec(dir, this.#env);
      this.#execs.set(dir, exec);
    }
    return exec;
  }

  #worktreePath(p: string, create: boolean): Promise<string> {
    return taskWorktreePath(this.root, p, create);
  }

  /**
   * The top-level folder of the repository around `cwd` (its real path), or null when `cwd` is not
   * inside a working tree.
   */
  static async topLevel(cwd: string): Promise<string | null> {
    try {
      return realpathSync.native(
        await new GitExec(cwd).api(['rev-parse', '--show-toplevel'], (g) => g.revparse(['--show-toplevel'])),
      );
    } catch (error) {
      if (error instanceof GitCommandError && error.exitCode !== null) return null;
      throw error;
    }
  }

  /** `git init` in `dir` on `branch`, then one commit of everything in it as loopfleet; returns the commit */
  static async createRepository(dir: string, branch: string, message: string): Promise<string> {
    const git = new GitExec(dir, gitEnvironment(IDENTITY_ENV));
    await git.api(['init'], (g) => g.init([`--initial-branch=${branch}`, '--quiet']));
    await git.api(['add', '-A'], (g) => g.add('-A'));
    const { commit } = await git.commitApi(['commit'], (g) => g.commit(message, [], { '--no-verify': null }));
    return commit;
  }

  async currentBranch(): Promise<string | null> {
    const status = await this.#at().api(['status'], (g) => g.status(['--untracked-files=no']));
    return status.detached || status.current === null ? null : status.current;
  }

  async branchExists(branch: string): Promise<boolean> {
    assertRefName(branch, 'branch');
    // show-ref reads the ref alone; `git branch --list` also reads every worktree's files, and fails while
    // another task's worktree is being added (its `commondir` half-written).
    const { exitCode } = await this.#at().run(
      ['show-ref', '--verify', '--quiet', '--end-of-options', `refs/heads/${branch}`],
      { ok: [0, 1] },
    );
    return exitCode === 0;
  }

  async treeOf(commit: string): Promise<string | null> {
    assertRefName(commit, 'commit');
    try {
      return await this.#at().api(['rev-parse', commit], (g) => g.revparse(['--verify', '-q', `${commit}^{tree}`]));
    } catch (error) {
      if (error instanceof GitCommandError && error.exitCode === 1) return null;
      throw error;
    }
  }

  async revParse(ref: string): Promise<string | null> {
    assertRefName(ref, 'ref');
    try {
      return await this.#at().api(['rev-parse', ref], (g) => g.revparse(['--verify', '-q', `${ref}^{commit}`]));
    } catch (error) {
      if (error instanceof GitCommandError && error.exitCode === 1) return null;
      throw error;
    }
  }

  async resolveCommits(refs: readonly string[]): Promise<Array<string | null>> {
    if (refs.length === 0) return [];
    for (const ref of refs) {
      assertRefName(ref, 'ref');
      // One name per line of cat-file's input: a name with a line break or a space in it is no ref.
      if (/\s/.test(ref)) throw new Error(`invalid ref: ${JSON.stringify(ref)}`);
    }
    // `<name>^{commit}` is looked up as `rev-parse --verify` looks it up; a name that does not resolve to a
    // commit prints `<name> missing` (or `ambiguous`), which is no object id.
    const { stdout } = await execa('git', [...hardeningArgs(), 'cat-file', '--batch-check=%(objectname)'], {
      cwd: this.root,
      env: this.#env,
      extendEnv: false,
      input: refs.map((r) => `${r}^{commit}\n`).join(''),
    });
    const lines = stdout.split('\n');
    return refs.map((_, i) => (/^[0-9a-f]{40,64}$/.test(lines[i] ?? '') ? lines[i]! : null));
  }

  async hasCommits(): Promise<boolean> {
    return (await this.revParse('HEAD')) !== null;
  }

  /** `XY path` of each tracked file with uncommitted changes in the main worktree (as `status --porcelain`) */
  async dirtyFiles(): Promise<string[]> {
    const status = await this.#at().api(['status'], (g) => g.status(['--untracked-files=no']));
    return status.files.map((f) => `${f.index}${f.working_dir} ${f.path}`);
  }

  #gitCommonDir(): Promise<string> {
    this.#commonDir ??= this.#at()
      .api(['rev-parse', '--git-common-dir'], (g) => g.revparse(['--git-common-dir']))
      .then((out) => path.resolve(this.root, out));
    return this.#commonDir;
  }

  ensureExcluded(pattern: string): Promise<string> {
    // Serialised so that two concurrent calls cannot both append the same line.
    const next = this.#excludeQueue.then(async () => {
      const file = path.join(await this.#gitCommonDir(), 'info', 'exclude');
      let content = '';
      try {
        content = await readFile(file, 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        await mkdir(path.dirname(file), { recursive: true });
      }
      if (content.split(/\r?\n/).some((line) => line.trim() === pattern)) return file;
      const separator = content.length > 0 && !content.endsWith('\n') ? '\n' : '';
      await appendFile(file, `${separator}${pattern}\n`);
      return file;
    });
    // The queue only orders the calls; each caller gets its own outcome through `next`.
    this.#excludeQueue = next.then(
      () => undefined,
      () => undefined,
    );
    return next;
  }

  async addWorktree(p: string, branch: string, base: string): Promise<void> {
    assertRefName(branch, 'branch');
    assertRefName(base, 'base');
    const target = await this.#worktreePath(p, true);
    if (await exists(target)) {
      const registered = (await this.listWorktrees()).find((w) => w.path === target);
      if (!registered || registered.prunable) {
        throw new RefusedError(
          `${target} exists but is not a registered worktree; move it away (loopfleet never deletes it)`,
        );
      }
      if (registered.branch !== branch) {
        throw new RefusedError(`${target} is a worktree of ${registered.branch ?? 'a detached HEAD'}, not ${branch}`);
      }
      return; // resuming: the worktree is there, on its branch, with whatever work it holds
    }
    try {
      await this.#worktreeAdd(target, ['-b', branch, base]);
    } catch (error) {
      if (!(error instanceof GitCommandError) || !(await this.branchExists(branch))) throw error;
      await this.#worktreeAdd(target, [branch]);
    }
  }

  /**
   * `git worktree add --detach <path> <commit>`: a throw-away checkout, placed like task worktrees. A
   * registered worktree already at that path is replaced; an unknown folder there is refused.
   */
  async addWorktreeDetached(p: string, commit: string): Promise<void> {
    assertRefName(commit, 'commit');
    const target = await this.#worktreePath(p, true);
    if (await exists(target)) {
      const registered = (await this.listWorktrees()).some((w) => w.path === target && !w.prunable);
      if (!registered)
        throw new RefusedError(
          `${target} exists but is not a registered worktree; move it away (loopfleet never deletes it)`,
        );
      await this.#at().run(['worktree', 'remove', '--force', '--force', target]);
    }
    await this.#worktreeAdd(target, ['--detach', commit]);
  }

  /**
   * `git worktree add -q <target> <rest>`, clearing a registration a crash or a manual `rm -rf` left behind.
   * git 2.x can lose a race between two concurrent adds (one reads the other's half-written
   * `.git/worktrees/<id>/commondir`); that failure is retried rather than every add serialised, which
   * would make a fleet's start as slow as its worktree count.
   */
  async #worktreeAdd(target: string, rest: string[], retry = true, races = 0): Promise<void> {
    const git = this.#at();
    try {
      await git.run(['worktree', 'add', '-q', target, ...rest]);
    } catch (error) {
      if (error instanceof GitCommandError && races < 3 && /failed to read .*commondir/.test(error.stderr)) {
        await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 80));
        // The lost add may have created the branch already: then it is checked out, not created again.
        const branch = rest[0] === '-b' ? rest[1] : undefined;
        const again = branch !== undefined && (await this.branchExists(branch)) ? [branch] : rest;
        return this.#worktreeAdd(target, again, retry, races + 1);
      }
      if (
        !(error instanceof GitCommandError) ||
        !retry ||
        !/missing but (already )?registered worktree/.test(error.stderr)
      )
        throw error;
      // Only this path's stale registration goes; `worktree prune` would also drop the user's worktrees
      // on a drive that happens to be unmounted.
      await git.run(['worktree', 'remove', '--force', target]);
      await this.#worktreeAdd(target, rest, false);
    }
  }

  async removeWorktree(p: string, force: boolean): Promise<void> {
    const target = await this.#worktreePath(p, false);
    try {
      await this.#at().run(['worktree', 'remove', ...(force ? ['--force', '--force'] : []), target]);
    } catch (error) {
      const gone = !(await exists(target)) && !(await this.listWorktrees()).some((w) => w.path === target);
      if (!gone) throw error;
    } finally {
      this.#execs.delete(target);
    }
  }

  async listWorktrees(): Promise<WorktreeInfo[]> {
    return parseWorktreeList(await this.#at().out(['worktree', 'list', '--porcelain', '-z']));
  }

  async pruneWorktrees(): Promise<void> {
    await this.#at().run(['worktree', 'prune']);
  }

  async diff(worktree: string, base: string): Promise<string> {
    assertRefName(base, 'base');
    return this.#at(worktree).out([
      'diff',
      '--no-color',
      '--no-ext-diff',
      '--no-textconv',
      '--ignore-submodules=none',
      `${base}...HEAD`,
    ]);
  }

  async diffNumstat(worktree: string, base: string): Promise<Array<{ path: string; added: number; deleted: number }>> {
    assertRefName(base, 'base');
    // No rename detection: a file moved away from a protected path must show up under its old name too.
    const out = await this.#at(worktree).out([
      'diff',
      '--numstat',
      '-z',
      '--no-renames',
      '--no-ext-diff',
      '--ignore-submodules=none',
      `${base}...HEAD`,
    ]);
    return parseNumstat(out);
  }

  // Every diff here is commit against commit with --ignore-submodules=none: a gitlink on the branch is
  // shown (HARDENING_CONFIG hides submodules by default), and no working tree is read, so none is entered.
  // The diffs stay on raw(): simple-git's diffSummary reads names without -z (a quoted name would reach
  // the protected-path checks altered) and returns neither the patch nor git's own stat text.
  async diffSummary(worktree: string, base: string): Promise<DiffSummary> {
    assertRefName(base, 'base');
    const git = this.#at(worktree);
    // The patch is streamed with a cap (`readPatch`): never held whole in memory.
    const [numbers, { patch }] = await Promise.all([
      diffNumbers(git, base, this.#env, true),
      readPatch(git, base, this.#env),
    ]);
    return { numstat: numbers.numstat, stat: numbers.stat, patch, entries: numbers.entries };
  }

  async merge(
    branch: string,
    base: string,
    message: string,
    options: { ignoreDirty?: readonly string[]; fileEdit?: MergeFileEdit } = {},
  ): Promise<MergeResult> {
    assertRefName(branch, 'branch');
    assertRefName(base, 'base');
    return mergeBranch(
      {
        git: this.#at(),
        root: this.root,
        backupPath: path.join(this.root, WORK_DIR, MERGE_BACKUP_NAME),
        worktrees: () => this.listWorktrees(),
        dirtyFiles: () => this.dirtyFiles(),
      },
      branch,
      base,
      message,
      options.ignoreDirty,
      options.fileEdit,
    );
  }

  async rebase(worktree: string, base: string): Promise<boolean> {
    assertRefName(base, 'base');
    const target = await this.#worktreePath(worktree, false);
    return rebaseOnto(this.#at(target), target, base);
  }

  async replayOnto(worktree: string, onto: string, keep: string): Promise<ConflictForecast> {
    assertRefName(onto, 'base');
    assertRefName(keep, 'ref');
    return replayOnto(this.#at(await this.#worktreePath(worktree, false)), onto, keep);
  }

  async resetHard(worktree: string, commit: string): Promise<void> {
    assertRefName(commit, 'commit');
    const target = await this.#worktreePath(worktree, false);
    await this.#at(target).run(['reset', '--hard', '-q', commit]);
  }

  async updateRef(ref: string, commit: string): Promise<void> {
    assertRefName(ref, 'ref');
    assertRefName(commit, 'commit');
    await this.#at().run(['update-ref', ref, commit]);
  }

  async deleteRef(ref: string): Promise<void> {
    assertRefName(ref, 'ref');
    await this.#at().run(['update-ref', '-d', ref]);
  }

  async deleteBranch(branch: string, force: boolean): Promise<void> {
    assertRefName(branch, 'branch');
    try {
      await this.#at().api(['branch', force ? '-D' : '-d', branch], (g) => g.deleteLocalBranch(branch, force));
    } catch (error) {
      const said = error instanceof GitCommandError ? (error.stderr || error.message).trim() : '';
      const reason = /(error: )?(.*(not fully merged|checked out at|used by worktree).*)/.exec(said)?.[2];
      if (reason !== undefined) throw new RefusedError(`cannot delete ${branch}: ${reason}`, { cause: error });
      throw error;
    }
  }

  async isMerged(branch: string, base: string): Promise<boolean> {
    assertRefName(branch, 'branch');
    assertRefName(base, 'base');
    const { exitCode } = await this.#at().run(['merge-base', '--is-ancestor', branch, base], { ok: [0, 1] });
    return exitCode === 0;
  }

  async forecastConflicts(left: string, right: string): Promise<ConflictForecast> {
    assertRefName(left, 'ref');
    assertRefName(right, 'ref');
    return forecastConflicts(this.#at(), left, right);
  }

  async changesSinceFork(base: string, commit: string): Promise<ForkChanges> {
    assertRefName(base, 'base');
    assertRefName(commit, 'commit');
    return changesSinceFork(this.#at(), base, commit);
  }

  // Snapshot commits and what they change: `commitSnapshot`, `diffEntries`, `readBlob`.
  async commitSnapshot(
    worktree: string,
    message: string,
    excludePaths: string[],
    limits?: SnapshotSizeLimits,
  ): Promise<SnapshotCommit> {
    const target = await this.#worktreePath(worktree, false);
    return commitSnapshot(this.#at(target), target, message, excludePaths, limits);
  }

  async diffEntries(worktree: string, base: string): Promise<DiffEntry[]> {
    return diffEntries(this.#at(await this.#worktreePath(worktree, false)), base, this.#env);
  }

  readBlob(object: string, maxBytes: number): Promise<BlobText | null> {
    return readBlob(this.#at(), object, maxBytes);
  }

  configReach(): Promise<ConfigReach> {
    return configReach(this.#at(), this.root);
  }

  // The remote: `remotes` (push, fetch, ls-remote).
  remoteUrl(name: string): Promise<string | null> {
    return remotes.remoteUrl(this.#at(), name);
  }

  push(remote: string, source: string, target: string, expect: string | null, auth?: RemoteAuth): Promise<PushResult> {
    return remotes.push(this.#at(), this.#env, remote, source, target, expect, auth);
  }

  fetch(remote: string, refspecs: readonly string[], auth?: RemoteAuth): Promise<void> {
    return remotes.fetch(this.#at(), this.#env, remote, refspecs, auth);
  }

  lsRemote(remote: string, refs: readonly string[], auth?: RemoteAuth): Promise<Map<string, string>> {
    return remotes.lsRemote(this.#at(), this.#env, remote, refs, auth);
  }
}
