/**
 * The sandbox self-test's passing result, kept once per sandbox configuration so that a session does not
 * attack its sandbox again when nothing that changes the answer has changed ({@link cachedSelfTest}).
 *
 * Invariants:
 * - only a pass is kept, under a key that covers what decides the answer: the runner's own description of
 *   its sandbox ({@link ProcessRunner.sandboxIdentity}: the enforcer's file, the kernel, the uid, the
 *   arguments, loopfleet's sandbox code) and the homes the self-test attacks; a runner that cannot describe
 *   its sandbox (a test's weakened one, a double) is self-tested every time;
 * - the file is read only from a folder outside the repository (and so outside every worktree), that is a
 *   real folder owned by this uid and writable by no one else, and only when the file itself is a regular
 *   file (never followed through a link) with the same owner and modes; anything else is no entry at all;
 * - agent-written code cannot plant an entry: it runs in the sandbox, where homes and the host's temporary
 *   folders are hidden, and only in its worktree; an entry for another key does not count.
 */
import { createHash, randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, mkdir, open, readdir, readFile, realpath, rename, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ProcessRunner } from '../../ports/process.js';
import { isInside } from '../fs/paths.js';
import { refuseEscapes, sandboxSelfTest } from './selftest.js';
import { passwdHome } from './system.js';

/** the file of kept passes in the cache folder */
export const SELF_TEST_CACHE_FILE = 'sandbox-selftest.json';
/** bumped when the key's recipe or the file's shape changes: older entries then count for nothing */
const FORMAT = 1;
/** passes kept at most (one per configuration met: a few bubblewrap upgrades, a few homes) */
const MAX_ENTRIES = 16;
/** a larger file is not read */
const MAX_FILE_BYTES = 64 * 1024;
/** kernel settings that decide whether unprivileged user namespaces can be made */
const USERNS_SETTINGS = [
  '/proc/sys/kernel/unprivileged_userns_clone',
  '/proc/sys/user/max_user_namespaces',
  '/proc/sys/kernel/apparmor_restrict_unprivileged_userns',
];

export interface SelfTestCache {
  /** the folder of {@link SELF_TEST_CACHE_FILE}: the person's cache, never a worktree */
  dir: string;
  /** folders whose files are never trusted (the repository, with its worktrees) */
  untrusted: string[];
}

/** `$XDG_CACHE_HOME/loopfleet` (when absolute), else `~/.cache/loopfleet`: the folder Node's compile cache uses too. */
export function selfTestCacheDir(env: NodeJS.ProcessEnv): string {
  const xdg = env.XDG_CACHE_HOME;
  const base = xdg !== undefined && path.isAbsolute(xdg) ? xdg : path.join(env.HOME || os.homedir(), '.cache');
  return path.join(base, 'loopfleet');
}

/** a digest of loopfleet's sandbox code (this folder): another version of it is another configuration */
let codeDigest: Promise<string> | undefined;
function sandboxCode(): Promise<string> {
  codeDigest ??= (async () => {
    const dir = path.dirname(fileURLToPath(import.meta.url));
    const hash = createHash('sha256');
    for (const name of (await readdir(dir)).sort()) {
      if (!/\.(js|ts)$/.test(name)) continue;
      hash
        .update(`${name}\0`)
        .update(await readFile(path.join(dir, name)))
        .update('\0');
    }
    return hash.digest('hex');
  })();
  return codeDigest;
}

async function setting(file: string): Promise<string | null> {
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch (error) {
    if (['ENOENT', 'EACCES', 'EPERM'].includes((error as NodeJS.ErrnoException).code ?? '')) return null;
    throw error;
  }
}

/**
 * What of this machine decides whether a bubblewrap sandbox holds, for {@link ProcessRunner.sandboxIdentity}:
 * the binary (its real path, device, inode, size, modes, owner and times: an upgrade or a replacement
 * changes them), the kernel's release and build, the user namespace settings, the uid and gid, the Node the
 * probes use, and loopfleet's sandbox code.
 */
export async function bwrapFacts(bwrap: string): Promise<Record<string, unknown>> {
  const real = await realpath(bwrap);
  const s = await stat(real);
  const settings: Record<string, string | null> = {};
  for (const file of USERNS_SETTINGS) settings[file] = await setting(file);
  return {
    enforcer: 'bwrap',
    path: real,
    file: [s.dev, s.ino, s.size, s.mode, s.uid, s.gid, s.mtimeMs, s.ctimeMs],
    kernel: [os.release(), os.version(), os.arch()],
    userns: settings,
    uid: process.getuid?.() ?? null,
    gid: process.getgid?.() ?? null,
    node: [process.execPath, process.version],
    code: await sandboxCode(),
  };
}

/** A folder or file this uid owns, of the kind expected, and no one else may write. */
function ownedAndClosed(info: { uid: number; mode: number }): boolean {
  return info.uid === (process.getuid?.() ?? info.uid) && (info.mode & 0o022) === 0;
}

/** The folder, resolved, when it may hold kept passes; null otherwise. */
async function trustedDir(cache: SelfTestCache): Promise<string | null> {
  let dir: string;
  try {
    dir = await realpath(cache.dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  for (const root of cache.untrusted) {
    const resolved = await realpath(root).catch(() => path.resolve(root)); // a root that is gone: compared as given
    if (isInside(dir, resolved)) return null;
  }
  const info = await lstat(dir);
  return info.isDirectory() && ownedAndClosed(info) ? dir : null;
}

/** The keys kept in `dir`; none when the file is missing, a link, another's, writable by others, or not ours. */
async function keptKeys(dir: string): Promise<string[]> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path.join(dir, SELF_TEST_CACHE_FILE), constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    // ELOOP: the name is a link, which is never followed.
    if (['ENOENT', 'ELOOP', 'EACCES'].includes((error as NodeJS.ErrnoException).code ?? '')) return [];
    throw error;
  }
  try {
    const info = await handle.stat();
    if (!info.isFile() || !ownedAndClosed(info) || info.size > MAX_FILE_BYTES) return [];
    const parsed = JSON.parse(await handle.readFile('utf8')) as unknown;
    if (typeof parsed !== 'object' || parsed === null) return [];
    const { format, passed } = parsed as { format?: unknown; passed?: unknown };
    if (format !== FORMAT || !Array.isArray(passed)) return [];
    return passed.filter((k): k is string => typeof k === 'string' && /^[0-9a-f]{64}$/.test(k));
  } catch (error) {
    if (error instanceof SyntaxError) return []; // a torn or foreign file: no entry, rewritten at the next pass
    throw error;
  } finally {
    await handle.close();
  }
}

/** Adds `key` to the kept passes, atomically (a file of its own renamed over the old one). */
async function keep(cache: SelfTestCache, key: string): Promise<void> {
  await mkdir(cache.dir, { recursive: true, mode: 0o700 });
  const dir = await trustedDir(cache);
  if (dir === null) return; // a folder loopfleet may not trust is not written to either
  const passed = [...(await keptKeys(dir)).filter((k) => k !== key), key].slice(-MAX_ENTRIES);
  const temp = path.join(dir, `.${SELF_TEST_CACHE_FILE}.${process.pid}.${randomBytes(4).toString('hex')}`);
  try {
    await writeFile(temp, `${JSON.stringify({ format: FORMAT, passed })}\n`, { flag: 'wx', mode: 0o600 });
    await rename(temp, path.join(dir, SELF_TEST_CACHE_FILE));
  } finally {
    await rm(temp, { force: true });
  }
}

/** The key of a pass for `identity`: with the homes the self-test plants its canaries in. */
function keyOf(identity: string): string {
  const homes = [...new Set([passwdHome() ?? os.homedir(), os.homedir()])];
  return createHash('sha256')
    .update(JSON.stringify({ format: FORMAT, identity, homes }))
    .digest('hex');
}

/**
 * {@link sandboxSelfTest}, skipped when a pass for this very configuration is kept in `cache`, and kept
 * when it passes. Without a cache, or for a runner that cannot describe its sandbox, it is the self-test.
 */
export async function cachedSelfTest(runner: ProcessRunner, cache: SelfTestCache | null): Promise<string[]> {
  const identity = cache === null ? null : ((await runner.sandboxIdentity?.()) ?? null);
  if (cache === null || identity === null) return sandboxSelfTest(runner);
  const key = keyOf(identity);
  const dir = await trustedDir(cache);
  if (dir !== null && (await keptKeys(dir)).includes(key)) return [];
  const failures = await sandboxSelfTest(runner);
  if (failures.length === 0) {
    try {
      await keep(cache, key);
    } catch (error) {
      // A cache that cannot be written (a read-only or full home) only costs the next session a self-test.
      if (
        !['EACCES', 'EPERM', 'EROFS', 'ENOSPC', 'ENOTDIR', 'EEXIST'].includes(
          (error as NodeJS.ErrnoException).code ?? '',
        )
      )
        throw error;
    }
  }
  return failures;
}

/** {@link cachedSelfTest}, throwing (exit 2) naming every escape when the sandbox is weaker than promised. */
export async function assertKeptSandboxHolds(runner: ProcessRunner, cache: SelfTestCache | null): Promise<void> {
  refuseEscapes(await cachedSelfTest(runner, cache));
}
