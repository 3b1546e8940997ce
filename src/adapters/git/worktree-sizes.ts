/**
 * File sizes measured on the working tree (lstat) before any of it is hashed into git's object store:
 * `git add` writes a blob for every file it stages, so a file the size guard would refuse must never reach
 * `add` — its blob would stay in the person's `.git` (an unreachable pack survives discard and prune).
 *
 * Invariants: nothing here writes to the repository; a candidate is every untracked (not ignored) or
 * modified file relative to the index in use; links count as their own small size, folders (a nested
 * repository) are left to the caller.
 */
import { lstat } from 'node:fs/promises';
import path from 'node:path';
import type { SnapshotSizeLimits } from '../../ports/git.js';
import { type GitExec, fields } from './exec.js';

export interface SizeCandidate {
  path: string;
  size: number;
  /** its size at HEAD, null for a new file */
  before: number | null;
}

async function regularSize(file: string): Promise<number | null> {
  try {
    const info = await lstat(file);
    return info.isFile() ? info.size : null;
  } catch (error) {
    // A deleted file, or one below a folder replaced by a file: nothing of it is written into the store.
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw error;
  }
}

/** One entry of HEAD's tree (`ls-tree -r -l`): a blob's size, null for a gitlink. */
export interface TreeEntry {
  mode: string;
  size: number | null;
  path: string;
}

/** Every entry of HEAD's tree, recursively, with blob sizes; none when HEAD does not resolve. */
export async function headTree(git: GitExec, config: readonly string[] = []): Promise<TreeEntry[]> {
  const head = await git.run([...config, 'ls-tree', '-r', '-z', '-l', 'HEAD'], { ok: [0, 128] });
  const entries: TreeEntry[] = [];
  for (const record of head.exitCode === 0 ? fields(head.stdout) : []) {
    const m = /^(\d{6}) \w+ [0-9a-f]+ +(\d+|-)\t(.*)$/s.exec(record);
    if (m !== null) entries.push({ mode: m[1]!, size: m[2] === '-' ? null : Number(m[2]), path: m[3]! });
  }
  return entries;
}

/**
 * Untracked (not ignored) regular files and tracked ones whose size differs from HEAD, with their sizes on
 * disk: `others` as `ls-files --others --exclude-standard` lists them, `head` as {@link headTree} reads
 * it. Sizes of tracked files come from HEAD's tree, so no file is hashed to find them.
 */
export async function sizeCandidates(
  root: string,
  others: readonly string[],
  head: readonly TreeEntry[],
): Promise<SizeCandidate[]> {
  const out: SizeCandidate[] = [];
  for (const rel of others) {
    if (rel.endsWith('/')) continue;
    const size = await regularSize(path.join(root, rel));
    if (size !== null) out.push({ path: rel, size, before: null });
  }
  for (const entry of head) {
    if ((entry.mode !== '100644' && entry.mode !== '100755') || entry.size === null) continue;
    const size = await regularSize(path.join(root, entry.path));
    if (size !== null && size !== entry.size) out.push({ path: entry.path, size, before: entry.size });
  }
  return out;
}

export type SnapshotLimits = SnapshotSizeLimits;

/**
 * The guard's size rules, applied to what staging would write: a file larger than max_file_bytes, or new
 * files and the growth of changed ones (a lower bound of their diff) adding up to more than max_bytes.
 */
export function sizeRefusals(candidates: readonly SizeCandidate[], limits: SnapshotLimits): string[] {
  const reasons: string[] = [];
  let total = 0;
  for (const c of candidates) {
    if (limits.exempt(c.path)) continue;
    if (c.size > limits.maxFileBytes) {
      reasons.push(
        `guard: ${c.path} is ${c.size} bytes, more than max_file_bytes ${limits.maxFileBytes} (measured before staging: nothing was written into .git)`,
      );
    }
    total += c.before === null ? c.size : Math.max(0, c.size - c.before);
  }
  if (total > limits.maxBytes) {
    reasons.push(
      `guard: the diff is at least ${total} bytes, more than max_bytes ${limits.maxBytes} (measured before staging: nothing was written into .git)`,
    );
  }
  return reasons;
}
