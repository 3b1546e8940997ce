/**
 * What loopfleet commits on a task branch, what the commit changes, and files as they are at a commit.
 *
 * Invariants:
 * - a snapshot commit holds the working tree as it is: the index is rebuilt from HEAD first, so no
 *   assume-unchanged or skip-worktree bit (nor anything else an agent wrote into the index) survives;
 * - loopfleet never runs git inside a repository an agent made: nested repositories and gitlinks are
 *   never staged, and every command here runs with submodule recursion off (a nested repository's
 *   config is the agent's, and `git status`/`git add` would run its core.fsmonitor on the host);
 * - after the commit, whatever in the working tree still differs from it is reported, not hidden.
 */
import { lstat, rm } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import type { BlobText, DiffEntry, SnapshotCommit } from '../../ports/git.js';
import { SANDBOX_OBJECTS, discoverGitLayout } from './layout.js';
import { type SnapshotLimits, headTree, sizeCandidates, sizeRefusals } from './worktree-sizes.js';
import { COMMIT_CONFIG, GitCommandError, type GitExec, assertRefName, fields, hardeningArgs } from './exec.js';

/**
 * Options that keep git out of nested repositories: with these, and nested repositories and gitlinks
 * left out of `add`, no command here starts git in one (which would run its core.fsmonitor).
 */
export const NO_NESTED_CONFIG = [
  '-c',
  'diff.ignoreSubmodules=all',
  '-c',
  'submodule.recurse=false',
  '-c',
  'status.submoduleSummary=false',
  '-c',
  'core.untrackedCache=false',
];

/** Files of a worktree's admin folder that would turn the next commit into a merge or cherry-pick. */
const IN_PROGRESS_STATE = [
  'MERGE_HEAD',
  'MERGE_MSG',
  'MERGE_MODE',
  'AUTO_MERGE',
  'CHERRY_PICK_HEAD',
  'REVERT_HEAD',
  'SQUASH_MSG',
];

async function isNestedRepo(dir: string): Promise<boolean> {
  try {
    await lstat(path.join(dir, '.git'));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR')
      return false;
    throw error;
  }
}

function literal(p: string): string {
  return `:(literal)${p}`;
}

function excludedBy(p: string, excludePaths: readonly string[]): boolean {
  const bare = p.replace(/\/$/, '');
  return excludePaths.some((e) => bare === e || bare.startsWith(`${e.replace(/\/$/, '')}/`));
}

/**
 * Commits the whole working tree of the task worktree `target` (bound to `git`), except `excludePaths`
 * (relative paths: the `.worktreeinclude` copies) and nested repositories; then lists what still differs.
 * With `limits`, a file or a total the size guard would refuse ends it before anything is staged (`refused`).
 */
export async function commitSnapshot(
  git: GitExec,
  target: string,
  message: string,
  excludePaths: readonly string[],
  limits?: SnapshotLimits,
): Promise<SnapshotCommit> {
  const layout = await discoverGitLayout(target);
  if (layout === null || !layout.linked || layout.checkout !== target)
    throw new Error(`${target} is not a linked task worktree`);
  // A one-parent snapshot: merge or cherry-pick state left by a command run there adds nothing to it.
  await Promise.all(IN_PROGRESS_STATE.map((name) => rm(path.join(layout.adminDir, name), { force: true })));
  // The index is the agent's: it goes, and a new one is read from HEAD. Every process that could hold
  // its lock ran in the sandbox, which ended with the agent.
  await rm(path.join(layout.adminDir, 'index'), { force: true });
  await rm(path.join(layout.adminDir, 'index.lock'), { force: true });
  await git.run([...NO_NESTED_CONFIG, 'read-tree', 'HEAD']);

  // Read once, used twice: the untracked files (nested repositories among them, as `dir/`) and HEAD's
  // tree, which is the fresh index's (its gitlinks; its blobs' sizes for the size rules).
  const others = fields(await git.out([...NO_NESTED_CONFIG, 'ls-files', '-z', '--others', '--exclude-standard']));
  const head = await headTree(git, NO_NESTED_CONFIG);
  const nested: string[] = [];
  for (const entry of others) {
    if (entry.endsWith('/') && (await isNestedRepo(path.join(target, entry)))) nested.push(entry);
  }
  const gitlinks = head.filter((e) => e.mode === '160000').map((e) => e.path);
  const skipped = [...nested.map((n) => n.replace(/\/$/, '')), ...gitlinks];
  if (limits !== undefined) {
    // Measured before `add`, which would write every staged file's blob into the person's object store.
    const candidates = (await sizeCandidates(target, others, head)).filter(
      (c) => !excludedBy(c.path, excludePaths) && !excludedBy(c.path, skipped),
    );
    const refused = sizeRefusals(candidates, limits);
    if (refused.length > 0) return { commit: null, differs: [], ignored: [], refused };
  }
  const skip = skipped.map((p) => `:(exclude,literal)${p}`);
  await git.run([...NO_NESTED_CONFIG, 'add', '-A', '--', '.', ...skip]);
  // Unstaged after `add -A` rather than left out of it: git refuses pathspecs naming ignored files.
  if (excludePaths.length > 0) await git.run([...NO_NESTED_CONFIG, 'reset', '-q', '--', ...excludePaths.map(literal)]);

  const { stdout, exitCode } = await git.run(
    [
      ...COMMIT_CONFIG,
      ...NO_NESTED_CONFIG,
      '-c',
      'core.abbrev=no',
      'commit',
      '--no-verify',
      '--no-edit',
      '-m',
      message,
    ],
    { ok: [0, 1] },
  );
  if (exitCode === 1 && !/nothing (added )?to commit|no changes added to commit/.test(stdout)) {
    throw new GitCommandError(['commit', '-m', message], exitCode, '', stdout);
  }
  // Objects a sandboxed `git add` wrote to the worktree's private store were re-hashed from the files.
  await rm(path.join(layout.adminDir, SANDBOX_OBJECTS), { recursive: true, force: true });
  const commit =
    exitCode === 1
      ? null
      : (/^\[[^\]]*?([0-9a-f]{40,64})\]/m.exec(stdout)?.[1] ?? (await git.out(['rev-parse', 'HEAD'])).trim());

  const differs: string[] = [];
  const status = fields(
    await git.out([
      ...NO_NESTED_CONFIG,
      'status',
      '--porcelain=v1',
      '-z',
      '--untracked-files=all',
      '--ignore-submodules=all',
      '--no-renames',
    ]),
  );
  for (const record of status) {
    const file = record.slice(3);
    if (excludedBy(file, excludePaths)) continue;
    differs.push(nested.includes(file) ? `${file} (a nested git repository: loopfleet never commits one)` : file);
  }
  const ignored = fields(
    await git.out([
      ...NO_NESTED_CONFIG,
      'ls-files',
      '-z',
      '--others',
      '--ignored',
      '--exclude-standard',
      '--directory',
    ]),
  );
  return { commit, differs, ignored: ignored.filter((p) => !excludedBy(p, excludePaths)) };
}

/** The numbers of a diff: each file's entry, its numstat and git's own diffstat text. */
export interface DiffNumbers {
  entries: DiffEntry[];
  numstat: Array<{ path: string; added: number; deleted: number }>;
  /** `--stat=200` as git prints it (names quoted where git quotes them), empty for an empty diff */
  stat: string;
}

/**
 * `git diff --raw --numstat` of `base...HEAD` with each blob's size (one cat-file process for all) and,
 * with `stat`, git's diffstat from the same process: raw and numstat records are NUL-terminated (`-z`),
 * and the diffstat follows the last of them as text, so no file name can be taken for another record.
 */
export async function diffNumbers(
  git: GitExec,
  base: string,
  env: Record<string, string>,
  stat: boolean,
): Promise<DiffNumbers> {
  assertRefName(base, 'base');
  // --ignore-submodules=none: a gitlink on the branch is listed (the guard refuses it); commit against
  // commit, git reads no working tree, so it never enters the repository the gitlink names.
  const raw = await git.out([
    ...NO_NESTED_CONFIG,
    '-c',
    'core.quotePath=false',
    'diff',
    '--raw',
    '--numstat',
    ...(stat ? ['--stat=200', '--no-color'] : []),
    '-z',
    '--no-renames',
    '--no-ext-diff',
    '--no-textconv',
    '--ignore-submodules=none',
    '--abbrev=40',
    `${base}...HEAD`,
  ]);
  const end = raw.lastIndexOf('\0');
  const out = fields(raw.slice(0, end + 1));
  const entries: DiffEntry[] = [];
  const numstat: DiffNumbers['numstat'] = [];
  const byPath = new Map<string, DiffEntry>();
  let i = 0;
  while (i < out.length && out[i]!.startsWith(':')) {
    const [oldMode, newMode, oldSha, newSha, status] = out[i]!.slice(1).split(' ') as [
      string,
      string,
      string,
      string,
      string,
    ];
    const entry: DiffEntry = {
      path: out[i + 1]!,
      status: status.charAt(0),
      oldMode,
      newMode,
      oldSha,
      newSha,
      size: null,
      binary: false,
      added: 0,
      deleted: 0,
    };
    entries.push(entry);
    byPath.set(entry.path, entry);
    i += 2;
  }
  for (; i < out.length; i++) {
    const m = /^(-|\d+)\t(-|\d+)\t(.*)$/s.exec(out[i]!);
    if (!m) continue;
    const added = m[1] === '-' ? 0 : Number(m[1]);
    const deleted = m[2] === '-' ? 0 : Number(m[2]);
    numstat.push({ path: m[3]!, added, deleted });
    const entry = byPath.get(m[3]!);
    if (!entry) continue;
    entry.binary = m[1] === '-';
    entry.added = added;
    entry.deleted = deleted;
  }
  await blobSizes(git, entries, env);
  return { entries, numstat, stat: stat ? raw.slice(end + 1) : '' };
}

/** Each entry's blob size (the new blob, the old one for a deletion; none for a gitlink), one cat-file for all. */
async function blobSizes(git: GitExec, entries: readonly DiffEntry[], env: Record<string, string>): Promise<void> {
  const blobs = entries
    .map((e) => ({ e, sha: e.status === 'D' ? e.oldSha : e.newSha, mode: e.status === 'D' ? e.oldMode : e.newMode }))
    .filter(({ mode }) => mode !== '160000');
  if (blobs.length === 0) return;
  const sizes = await execa(
    'git',
    [...hardeningArgs(), ...NO_NESTED_CONFIG, 'cat-file', '--batch-check=%(objectsize)'],
    {
      cwd: git.dir,
      env,
      extendEnv: false,
      input: blobs.map((b) => `${b.sha}\n`).join(''),
    },
  );
  sizes.stdout.split('\n').forEach((line, k) => {
    if (blobs[k] !== undefined && /^\d+$/.test(line)) blobs[k].e.size = Number(line);
  });
}

/** `git diff --raw --numstat` of `base...HEAD` with each blob's size (one cat-file process for all). */
export async function diffEntries(git: GitExec, base: string, env: Record<string, string>): Promise<DiffEntry[]> {
  return (await diffNumbers(git, base, env, false)).entries;
}

/** A blob (`<rev>:<path>` or its id) as text when it is at most `maxBytes`; null when there is no such blob. */
export async function readBlob(git: GitExec, spec: string, maxBytes: number): Promise<BlobText | null> {
  assertRefName(spec, 'object');
  const size = await git.run(['cat-file', '-s', spec], { ok: [0, 128] });
  if (size.exitCode !== 0) return null;
  const bytes = Number(size.stdout.trim());
  if (!(bytes <= maxBytes)) return { size: bytes, text: null };
  const type = (await git.out(['cat-file', '-t', spec])).trim();
  if (type !== 'blob') return null;
  return { size: bytes, text: await git.out(['cat-file', 'blob', spec]) };
}

/** The most bytes of `git diff -p` text read into memory; the rest is drained and said to be cut. */
export const MAX_PATCH_BYTES = 64 * 1024 * 1024;

/**
 * `git diff -p` of `base...HEAD`, read as a stream and kept up to `maxBytes` (whole lines): git's output is
 * never held whole, so a huge diff costs at most `maxBytes` of memory. A cut ends in a line saying so.
 */
export async function readPatch(
  git: GitExec,
  base: string,
  env: Record<string, string>,
  maxBytes = MAX_PATCH_BYTES,
): Promise<{ patch: string; cut: number }> {
  assertRefName(base, 'base');
  const child = execa(
    'git',
    // The same hardened git as GitExec's (hooks, fsmonitor, drivers off); gitlinks shown, never entered.
    [
      ...hardeningArgs(),
      ...NO_NESTED_CONFIG,
      '-c',
      'core.quotePath=false',
      'diff',
      '--no-renames',
      '-p',
      '--no-color',
      '--no-ext-diff',
      '--no-textconv',
      '--ignore-submodules=none',
      `${base}...HEAD`,
    ],
    {
      cwd: git.dir,
      env,
      extendEnv: false,
      buffer: false,
      encoding: 'buffer',
      stdin: 'ignore',
      stderr: 'pipe',
      reject: false,
    },
  );
  const kept: Buffer[] = [];
  let size = 0;
  let cut = 0;
  const stderr: Buffer[] = [];
  child.stderr?.on('data', (chunk: Buffer) => {
    if (stderr.length < 64) stderr.push(chunk);
  });
  for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
    const room = maxBytes - size;
    if (room <= 0) cut += chunk.length;
    else if (chunk.length <= room) {
      kept.push(chunk);
      size += chunk.length;
    } else {
      kept.push(chunk.subarray(0, room));
      size += room;
      cut += chunk.length - room;
    }
  }
  const result = await child;
  if (result.exitCode !== 0) {
    throw new GitCommandError(
      ['diff', '-p', `${base}...HEAD`],
      result.exitCode ?? null,
      Buffer.concat(stderr).toString('utf8'),
      '',
    );
  }
  let bytes = Buffer.concat(kept);
  if (cut > 0) {
    const end = bytes.lastIndexOf(0x0a);
    cut += bytes.length - (end + 1);
    bytes = bytes.subarray(0, end + 1);
  }
  const patch = bytes.toString('utf8');
  return { patch: cut > 0 ? `${patch}… ${cut} bytes of diff cut …\n` : patch, cut };
}
