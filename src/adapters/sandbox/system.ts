/**
 * What of the host a sandboxed command sees: the system folders read-only, minus the files in /etc that
 * the host keeps from ordinary users (shadow passwords, TLS and SSH private keys); the tools on PATH that
 * live outside them; and nothing else — no home folder, no /run, /var, /srv, /mnt, no host /tmp, so no
 * Unix socket of the host (docker, ssh-agent, D-Bus, databases) can be reached by path.
 */
import { lstat, readdir, readlink, realpath, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { isInside } from '../fs/paths.js';

/**
 * Folders that hold the system's programs, libraries and configuration; mounted read-only when present
 * (/nix and /gnu: the package stores of NixOS and Guix, where every program on PATH lives).
 */
export const SYSTEM_FOLDERS: readonly string[] = [
  '/usr',
  '/bin',
  '/sbin',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/etc',
  '/opt',
  '/nix',
  '/gnu',
];

/** Never brought back through PATH, whatever PATH says: the root, and folders that gather sockets or homes. */
const NEVER_MOUNTED: readonly string[] = [
  '/',
  '/home',
  '/root',
  '/run',
  '/var',
  '/var/run',
  '/var/lib',
  '/tmp',
  '/var/tmp',
  '/srv',
  '/mnt',
  '/media',
  '/proc',
  '/sys',
  '/dev',
];

/** How far into /etc the search for private files goes. */
const ETC_DEPTH = 8;

export type Mount =
  | { kind: 'ro' | 'rw'; src: string; dest: string }
  | { kind: 'tmpfs'; dest: string }
  | { kind: 'symlink'; target: string; dest: string }
  /** a file (or socket) covered by /dev/null, which the sandbox's nodev mounts do not let it open */
  | { kind: 'empty'; dest: string };

export function mountArgs(m: Mount): string[] {
  switch (m.kind) {
    case 'ro':
      return ['--ro-bind', m.src, m.dest];
    case 'rw':
      return ['--bind', m.src, m.dest];
    case 'tmpfs':
      return ['--tmpfs', m.dest];
    case 'symlink':
      return ['--symlink', m.target, m.dest];
    case 'empty':
      return ['--ro-bind', '/dev/null', m.dest];
  }
}

export async function isDir(p: string): Promise<boolean> {
  try {
    return (await stat(p)).isDirectory();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EACCES') return false;
    throw error;
  }
}

/** The system folders of this machine: a folder read-only, a symlink (/bin → usr/bin) as the same symlink. */
export async function systemMounts(folders: readonly string[] = SYSTEM_FOLDERS): Promise<Mount[]> {
  const mounts: Mount[] = [];
  for (const folder of folders) {
    let info;
    try {
      info = await lstat(folder);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw error;
    }
    if (info.isSymbolicLink()) {
      if (await isDir(folder)) mounts.push({ kind: 'symlink', target: await readlink(folder), dest: folder });
    } else if (info.isDirectory()) {
      mounts.push({ kind: 'ro', src: folder, dest: folder });
    }
  }
  return mounts;
}

let privateInEtc: Promise<Mount[]> | undefined;

/**
 * Files and folders of /etc that others may not read (mode without o+r): covered by /dev/null or by an
 * empty folder. Inside the sandbox the command's files are checked against its real uid, so under root
 * it would otherwise read what only root reads. Found once per process.
 */
export function privateEtcMounts(): Promise<Mount[]> {
  privateInEtc ??= (async () => {
    const found: Mount[] = [];
    const walk = async (dir: string, depth: number): Promise<void> => {
      let entries;
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'EACCES' || code === 'ENOENT') return;
        throw error;
      }
      for (const entry of entries) {
        const p = path.join(dir, entry.name);
        if (entry.isFile() || entry.isDirectory()) {
          const mode = (await lstat(p)).mode;
          const othersMayRead = entry.isDirectory() ? (mode & 0o005) === 0o005 : (mode & 0o004) !== 0;
          if (!othersMayRead) found.push(entry.isDirectory() ? { kind: 'tmpfs', dest: p } : { kind: 'empty', dest: p });
          else if (entry.isDirectory() && depth < ETC_DEPTH) await walk(p, depth + 1);
        }
      }
    };
    if (await isDir('/etc')) await walk('/etc', 1);
    return found;
  })();
  return privateInEtc;
}

/** The home folder of this process's passwd entry; null when the uid has none (a container's random uid). */
export function passwdHome(): string | null {
  try {
    return os.userInfo().homedir;
  } catch (error) {
    if ((error as { info?: { code?: string } }).info?.code === 'ENOENT') return null;
    throw error;
  }
}

/** Every home folder this process can name: the passwd entry's, os.homedir() ($HOME), and the command's HOME. */
export async function homeFolders(env: Record<string, string>): Promise<string[]> {
  const homes = new Set<string>(['/root', '/home']);
  for (const candidate of [passwdHome(), os.homedir(), process.env.HOME, env.HOME]) {
    if (!candidate || !path.isAbsolute(candidate) || !(await isDir(candidate))) continue;
    const real = await realpath(candidate);
    if (real !== '/') homes.add(real);
  }
  return [...homes];
}

/**
 * PATH entries that the system folders do not already hold (a Node.js installed by nvm in a home,
 * ~/.cargo/bin, a project's node_modules/.bin) come back read-only, so that the tools the command expects
 * are still there: a `bin` folder with its sibling `lib`, a `node_modules/.bin` with the whole
 * `node_modules` its links point into. A folder that is a home, or that gathers sockets (/run, /var/lib),
 * is never mounted whole, even when PATH names it.
 */
export async function toolchainMounts(
  env: Record<string, string>,
  homes: string[],
  writable: string[],
): Promise<Mount[]> {
  const forbidden = [...NEVER_MOUNTED, ...homes];
  const covered = (p: string) => SYSTEM_FOLDERS.some((s) => isInside(p, s)) || writable.some((w) => isInside(p, w));
  const mounts: Mount[] = [];
  const add = async (dest: string) => {
    if (forbidden.includes(dest) || covered(dest)) return;
    if (mounts.some((m) => isInside(dest, m.dest))) return;
    mounts.push({ kind: 'ro', src: await realpath(dest), dest });
  };
  for (const entry of (env.PATH ?? '').split(':')) {
    if (!path.isAbsolute(entry)) continue;
    const dest = path.normalize(entry);
    if (covered(dest) || !(await isDir(dest))) continue;
    const parent = path.dirname(dest);
    if (path.basename(dest) === '.bin' && path.basename(parent) === 'node_modules') {
      await add(parent);
      continue;
    }
    await add(dest);
    const lib = path.join(parent, 'lib');
    if (path.basename(dest) === 'bin' && !forbidden.includes(parent) && (await isDir(lib))) await add(lib);
  }
  return mounts;
}
