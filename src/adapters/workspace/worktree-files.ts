/**
 * Files a new worktree needs that git does not carry: ignored files listed in `.worktreeinclude` (`.env`)
 * and dependency folders (`node_modules`).
 *
 * Invariants:
 * - only files git ignores in the main checkout are copied, and they are reported so that they are never
 *   committed;
 * - nothing is read through a link leading outside the repository, nothing is written through a link
 *   inside the worktree, and an existing file in the worktree is never overwritten;
 * - a dependency folder is cloned only when every lockfile of the main checkout is byte-identical in the
 *   worktree, so the clone is what installing would have produced.
 */
import { execFile } from 'node:child_process';
import { constants } from 'node:fs';
import { copyFile, cp, lstat, mkdtemp, readFile, readdir, realpath, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import ignore from 'ignore';
import { RefusedError } from '../../domain/errors.js';
import type { DependencyClone } from '../../ports/workspace.js';
import { GitExec, fields } from '../git/exec.js';
import { isInside } from '../fs/paths.js';
import { LinkRefused, copyNew, ensureRealFolder } from '../fs/nofollow.js';
import { WORK_DIR } from '../../domain/layout.js';

const execFileAsync = promisify(execFile);

export const INCLUDE_FILE = '.worktreeinclude';
/** Folders never searched for included files unless a pattern names them. */
const SKIPPED_UNLESS_NAMED = ['node_modules', WORK_DIR];
export const LOCKFILES = [
  'package-lock.json',
  'npm-shrinkwrap.json',
  'yarn.lock',
  'pnpm-lock.yaml',
  'bun.lock',
  'bun.lockb',
];

async function readOptional(file: string): Promise<Buffer | null> {
  try {
    return await readFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

async function lstatOptional(p: string): Promise<import('node:fs').Stats | null> {
  try {
    return await lstat(p);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** Relative paths (posix) of ignored files in the main checkout that the patterns select. */
async function selectIncluded(root: string, patterns: string): Promise<string[]> {
  const ig = ignore().add(patterns);
  const named = SKIPPED_UNLESS_NAMED.filter((name) =>
    patterns.split(/\r?\n/).some((line) => !line.trimStart().startsWith('#') && line.includes(name)),
  );
  const skip = (name: string, rel: string): boolean =>
    name === '.git' || (name === 'node_modules' && !named.includes(name)) || (rel === WORK_DIR && !named.includes(rel));

  // git collapses a folder whose whole content is ignored into one `dir/` entry (sometimes listing some of
  // its files as well); those folders are walked here, and duplicates dropped.
  const listed = fields(
    await new GitExec(root).out(['ls-files', '--others', '--ignored', '--exclude-standard', '--directory', '-z']),
  );
  const selected = new Set<string>();
  const walk = async (rel: string): Promise<void> => {
    for (const entry of await readdir(path.join(root, rel), { withFileTypes: true })) {
      const child = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!skip(entry.name, child)) await walk(child);
      } else if (ig.ignores(child)) {
        selected.add(child);
      }
    }
  };
  for (const entry of listed) {
    const rel = entry.replace(/\/$/, '');
    const parts = rel.split('/');
    if (parts.some((part, i) => skip(part, parts.slice(0, i + 1).join('/')))) continue;
    if (entry.endsWith('/')) await walk(rel);
    else if (ig.ignores(rel)) selected.add(rel);
  }
  return [...selected].sort();
}

/** The file to read for `rel`: itself, or the target of a link that stays inside the repository. */
async function readableSource(root: string, rel: string): Promise<{ file: string; mode: number }> {
  const full = path.join(root, rel);
  let real: string;
  try {
    real = await realpath(full);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      throw new RefusedError(`${INCLUDE_FILE}: ${rel} is a broken link`);
    throw error;
  }
  if (!isInside(real, root) || isInside(real, path.join(root, '.git'))) {
    throw new RefusedError(
      `${INCLUDE_FILE}: ${rel} links to ${real}, outside the repository; copy the file itself or drop the pattern`,
    );
  }
  const info = await stat(real);
  if (!info.isFile()) throw new RefusedError(`${INCLUDE_FILE}: ${rel} is not a regular file`);
  return { file: real, mode: info.mode & 0o7777 };
}

/** Creates the folders of `relDir` inside the worktree, refusing any link on the way. */
async function ensureFolderInside(worktree: string, relDir: string, what: string): Promise<string> {
  try {
    return await ensureRealFolder(worktree, relDir);
  } catch (error) {
    if (error instanceof LinkRefused) throw new RefusedError(`${what}: ${error.message} in the worktree`);
    throw error;
  }
}

/** The ignored files of the main checkout that `.worktreeinclude` selects, as relative paths; copies nothing. */
export async function includedPaths(repoRoot: string): Promise<string[]> {
  const root = await realpath(repoRoot);
  const patterns = await readOptional(path.join(root, INCLUDE_FILE));
  return patterns === null ? [] : selectIncluded(root, patterns.toString('utf8'));
}

/**
 * Copies the ignored files of the main checkout that `.worktreeinclude` selects into the worktree,
 * keeping relative paths and modes. Returns every selected path (also those already in the worktree),
 * for the committer to exclude. Throws RefusedError, before copying anything, when a selected file links
 * outside the repository.
 */
export async function copyIncluded(repoRoot: string, worktreePath: string): Promise<string[]> {
  const root = await realpath(repoRoot);
  const worktree = await realpath(worktreePath);
  const patterns = await readOptional(path.join(root, INCLUDE_FILE));
  if (patterns === null) return [];
  const selected = (await selectIncluded(root, patterns.toString('utf8'))).filter(
    (rel) => !isInside(path.join(root, rel), worktree),
  );
  const sources = await Promise.all(selected.map(async (rel) => ({ rel, ...(await readableSource(root, rel)) })));

  for (const { rel, file, mode } of sources) {
    await ensureFolderInside(worktree, path.posix.dirname(rel), INCLUDE_FILE);
    const dest = path.join(worktree, rel);
    if ((await lstatOptional(dest)) !== null) continue; // the worktree's own copy wins (a link is never written through)
    await copyNew(file, dest, mode);
  }
  return selected;
}

async function sameBytes(a: string, b: string): Promise<boolean> {
  const [x, y] = await Promise.all([readOptional(a), readOptional(b)]);
  return x !== null && y !== null && x.equals(y);
}

/**
 * Whether the file system clones files copy-on-write between the two places. Tried on one file first:
 * cp would otherwise try, and fail, every file of the folder before giving up. The probe is made in a new
 * folder of loopfleet's next to the worktree (same file system), never inside it: a worktree may hold a link
 * named like any probe.
 */
async function canReflink(sampleFile: string, worktree: string): Promise<boolean> {
  const dir = await mkdtemp(path.join(path.dirname(worktree), '.loopfleet-reflink-'));
  const probe = path.join(dir, 'probe');
  try {
    await copyFile(sampleFile, probe, constants.COPYFILE_FICLONE_FORCE | constants.COPYFILE_EXCL);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOTSUP' || code === 'EOPNOTSUPP' || code === 'EXDEV' || code === 'EINVAL' || code === 'ENOSYS')
      return false;
    throw error;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

type CloneMethod = Exclude<DependencyClone['method'], 'none'>;

async function cloneFolder(src: string, dest: string, method: CloneMethod): Promise<void> {
  // GNU cp: much faster than a copy file by file from here, and it keeps links, modes and times.
  if (method === 'reflink') await execFileAsync('cp', ['-a', '--reflink=always', src, dest]);
  else if (method === 'hardlink') await execFileAsync('cp', ['-a', '-l', src, dest]);
  else if (process.platform === 'linux') await execFileAsync('cp', ['-a', src, dest]);
  else await cp(src, dest, { recursive: true, verbatimSymlinks: true, preserveTimestamps: true, errorOnExist: true });
}

export interface LinkOptions {
  /**
   * Allow hard links when copy-on-write is not available. Hard-linked files share their content with
   * the main checkout: a program that rewrites a file in place changes both. Default true.
   */
  hardlinks?: boolean;
}

/**
 * Clones dependency folders of the main checkout into the worktree when its lockfiles are byte-identical:
 * copy-on-write where the file system supports it, else hard links, else a plain copy. Otherwise, or when
 * the folder is missing in the main checkout or already present in the worktree, `{method: 'none', reason}`:
 * the caller installs them itself.
 */
export async function linkDependencies(
  repoRoot: string,
  worktreePath: string,
  dirs: string[] = ['node_modules'],
  options: LinkOptions = {},
): Promise<DependencyClone> {
  const started = performance.now();
  const none = (reason: string): DependencyClone => ({
    method: 'none',
    reason,
    ms: Math.round(performance.now() - started),
  });
  const root = await realpath(repoRoot);
  const worktree = await realpath(worktreePath);

  const lockfiles = (
    await Promise.all(LOCKFILES.map(async (name) => ((await lstatOptional(path.join(root, name))) ? name : null)))
  ).filter((name): name is string => name !== null);
  if (lockfiles.length === 0) return none('no lockfile in the main checkout');
  for (const name of lockfiles) {
    if (!(await sameBytes(path.join(root, name), path.join(worktree, name))))
      return none(`${name} differs from the main checkout`);
  }
  for (const dir of dirs) {
    if (path.isAbsolute(dir) || dir.split(/[\\/]/).includes('..'))
      throw new Error(`dependency folder must be relative to the repository: ${dir}`);
    const info = await lstatOptional(path.join(root, dir));
    if (info === null || !info.isDirectory()) return none(`no ${dir} folder in the main checkout`);
    if ((await lstatOptional(path.join(worktree, dir))) !== null)
      return none(`${dir} is already present in the worktree`);
  }

  // A folder on the way that is a link (`packages -> /home/me`) would put the clone, or its removal after a
  // failed method, outside the worktree: every parent is a real folder of the worktree before anything is cloned.
  const dests: Array<{ src: string; dest: string }> = [];
  for (const dir of dirs) {
    const parent = await ensureFolderInside(worktree, path.dirname(dir), 'dependency folder');
    dests.push({ src: path.join(root, dir), dest: path.join(parent, path.basename(dir)) });
  }
  const lockfile = lockfiles[0] as string;
  const methods: CloneMethod[] = [
    ...(process.platform === 'linux' && (await canReflink(path.join(root, lockfile), worktree))
      ? ['reflink' as const]
      : []),
    ...(process.platform === 'linux' && options.hardlinks !== false ? ['hardlink' as const] : []),
    'copy',
  ];
  const failures: string[] = [];
  for (const method of methods) {
    try {
      for (const { src, dest } of dests) await cloneFolder(src, dest, method);
      return { method, reason: null, ms: Math.round(performance.now() - started) };
    } catch (error) {
      failures.push(`${method}: ${(error as Error).message.split('\n')[0]}`);
      // Only what this attempt created goes: the folders did not exist before (checked above).
      for (const { dest } of dests) await rm(dest, { recursive: true, force: true });
    }
  }
  return none(`cloning failed (${failures.join('; ')})`);
}
