/**
 * The tracked files of a worktree around a check. Before it: the index (built by loopfleet from the commit
 * just before, never one a check could have written yet) and each file's identity on disk — device,
 * inode, change time, size and mode. After it: every file whose identity moved is hashed as git would hash
 * it and compared with the index's blob and mode.
 *
 * Why identity, not only content: a check can rewrite a file, run the tests on the rewritten code and
 * put the original back on exit; the content then matches again, but every write, rename, link or chmod
 * sets the inode's change time, which nothing unprivileged can set back (utimensat sets only access and
 * modification times), and a replaced file has another inode. What a folder rename would leave untouched
 * is closed by the folders being mount points inside the sandbox (see TrackedRecord.folders).
 */
import { createHash } from 'node:crypto';
import { lstat, readFile, readlink, realpath } from 'node:fs/promises';
import path from 'node:path';
import type { TrackedChange, TrackedFile, TrackedFiles, TrackedRecord } from '../../ports/verification.js';
import { GitExec, IDENTITY_ENV, gitEnvironment } from './exec.js';

/**
 * At most this many folders are made mount points, the shallowest first: bubblewrap's cost grows with the
 * square of its mounts (measured: 256 → 0.3 s, 1000 → 3 s, 2000 → 13 s per start). Deeper folders of a
 * larger tree are not pinned, and a check could swap one of them for another and back unseen.
 */
const MAX_PINNED_FOLDERS = 256;
const BATCH = 128;

async function identity(file: string): Promise<string | null> {
  try {
    const s = await lstat(file, { bigint: true });
    return `${s.dev}:${s.ino}:${s.ctimeNs}:${s.size}:${s.mode}`;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR')
      return null;
    throw error;
  }
}

/** `<mode> <sha> <stage>\t<path>` records of `git ls-files -s -z`; gitlinks are left out (their content is not ours to hash). */
function parseStage(stdout: string): Array<{ path: string; mode: string; sha: string }> {
  const out: Array<{ path: string; mode: string; sha: string }> = [];
  for (const record of stdout.split('\0')) {
    const m = /^(\d{6}) ([0-9a-f]+) \d\t(.+)$/s.exec(record);
    if (m === null || m[1] === '160000') continue;
    out.push({ mode: m[1]!, sha: m[2]!, path: m[3]! });
  }
  return out;
}

async function inBatches<T, R>(items: readonly T[], each: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += BATCH) out.push(...(await Promise.all(items.slice(i, i + BATCH).map(each))));
  return out;
}

/** The file's mode and blob id as git would record them; null when it is neither a file nor a symlink. */
async function blobOf(file: string, algorithm: string): Promise<{ mode: string; sha: string } | null> {
  const s = await lstat(file);
  let content: Buffer;
  let mode: string;
  if (s.isSymbolicLink()) {
    content = Buffer.from(await readlink(file, { encoding: 'buffer' }));
    mode = '120000';
  } else if (s.isFile()) {
    content = await readFile(file);
    mode = s.mode & 0o100 ? '100755' : '100644';
  } else return null;
  const sha = createHash(algorithm).update(`blob ${content.length}\0`).update(content).digest('hex');
  return { mode, sha };
}

export class GitTrackedFiles implements TrackedFiles {
  readonly #env = gitEnvironment(IDENTITY_ENV);

  async record(dir: string): Promise<TrackedRecord> {
    const staged = parseStage(await new GitExec(dir, this.#env).out(['ls-files', '-s', '-z']));
    const files: TrackedFile[] = await inBatches(staged, async (f) => ({
      ...f,
      identity: await identity(path.join(dir, f.path)),
    }));
    const folders = new Set<string>();
    for (const f of staged) {
      for (let d = path.posix.dirname(f.path); d !== '.'; d = path.posix.dirname(d)) folders.add(d);
    }
    const depth = (p: string) => p.split('/').length;
    const sorted = [...folders].sort((a, b) => depth(a) - depth(b) || a.localeCompare(b)).slice(0, MAX_PINNED_FOLDERS);
    // Only real folders are bound onto themselves: a mount follows a symlink, and a missing folder would fail the sandbox.
    // Real paths: the sandbox mounts the worktree at its real path, and a bind's destination must lie on it.
    const top = await realpath(dir);
    const real = await inBatches(sorted, async (d) =>
      (await lstat(path.join(top, d)).catch(() => null))?.isDirectory() ? path.join(top, d) : null,
    );
    return { files, folders: real.filter((d): d is string => d !== null) };
  }

  async changes(dir: string, record: TrackedRecord): Promise<TrackedChange[]> {
    const found = await inBatches(record.files, async (f): Promise<TrackedChange | null> => {
      const file = path.join(dir, f.path);
      const now = await identity(file);
      if (now === null) return { path: f.path, kind: 'deleted' };
      if (now === f.identity) return null;
      const blob = await blobOf(file, f.sha.length === 64 ? 'sha256' : 'sha1');
      return {
        path: f.path,
        kind: blob !== null && blob.mode === f.mode && blob.sha === f.sha ? 'restored' : 'changed',
      };
    });
    return found.filter((c): c is TrackedChange => c !== null);
  }
}
