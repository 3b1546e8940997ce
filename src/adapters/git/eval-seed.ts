/**
 * Git for running an eval task: a repository of its own holding only the history up to the task's start,
 * the human change's files as text, and the size of a diff. Everything here only reads the person's
 * repository; the run repositories are new folders loopfleet made.
 */
import { mkdir } from 'node:fs/promises';
import { GitExec, IDENTITY_ENV, assertRefName, gitEnvironment } from './exec.js';

/**
 * A new repository at `dir` whose one branch `branch` is `commit` of `source`, fetched with the history it
 * reaches and nothing else: no later commit, no other ref, no object only a later commit has — so an agent
 * working in it cannot find the change it is asked to make, nor its tests. No files are checked out.
 */
export async function seedRepository(source: string, commit: string, dir: string, branch: string): Promise<void> {
  assertRefName(commit, 'commit');
  await mkdir(dir, { recursive: true });
  // The hardening refuses local transports for every other command; this one reads the person's own repository.
  const git = new GitExec(dir, gitEnvironment(IDENTITY_ENV), ['protocol.file.allow=always']);
  await git.run(['init', '--quiet', `--initial-branch=${branch}`]);
  await git.run([
    'fetch',
    '--quiet',
    '--no-tags',
    '--no-write-fetch-head',
    '--update-head-ok',
    source,
    `${commit}:refs/heads/${branch}`,
  ]);
}

/** The content of each path at `commit`, as text (a path the commit does not have is left out). */
export async function filesAt(root: string, commit: string, paths: readonly string[]): Promise<Record<string, string>> {
  assertRefName(commit, 'commit');
  const git = new GitExec(root, gitEnvironment());
  const files: Record<string, string> = {};
  for (const path of paths) {
    const shown = await git.run(['cat-file', 'blob', `${commit}:${path}`], { ok: [0, 128] });
    if (shown.exitCode === 0) files[path] = shown.stdout;
  }
  return files;
}

/** Lines added plus lines deleted between two commits, over `paths` when given (a binary file counts 0). */
export async function changedLines(root: string, from: string, to: string, paths?: readonly string[]): Promise<number> {
  assertRefName(from, 'commit');
  assertRefName(to, 'commit');
  if (paths !== undefined && paths.length === 0) return 0;
  const git = new GitExec(root, gitEnvironment());
  const out = await git.out(['diff', '--numstat', '--no-renames', from, to, '--', ...(paths ?? [])]);
  let lines = 0;
  for (const row of out.split('\n')) {
    const [added, deleted] = row.split('\t');
    lines += (Number.parseInt(added ?? '', 10) || 0) + (Number.parseInt(deleted ?? '', 10) || 0);
  }
  return lines;
}

/** The first parent of `commit`, or null when it has none or is not a commit of `root`. */
export async function firstParent(root: string, commit: string): Promise<string | null> {
  assertRefName(commit, 'commit');
  const git = new GitExec(root, gitEnvironment());
  const r = await git.run(['rev-parse', '--verify', '--quiet', `${commit}^1^{commit}`], { ok: [0, 1, 128] });
  return r.exitCode === 0 ? r.stdout.trim() : null;
}
