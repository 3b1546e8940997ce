/**
 * bubblewrap arguments that confine a command: the system read-only, only `cwd` and the listed folders
 * writable, a private /tmp, no network, its own process tree, and the user's home folders hidden.
 *
 * Inside a linked worktree, git keeps working on the worktree's own index, but nothing that git shares
 * with the repository can be changed — refs (other branches), hooks, config, the object store:
 * - the repository's common folder is mounted read-only, twice: at its own path, and at SHADOW_GIT_DIR
 *   where its `objects` is replaced by the worktree's private, writable store (SANDBOX_OBJECTS, with the
 *   shared store as an alternate); the worktree's `commondir` is pointed at SHADOW_GIT_DIR, so the
 *   redirection applies to this repository only, never to another repository the command creates;
 * - the worktree's admin folder stays writable (index, index.lock, logs) but the files that decide which
 *   repository and which branch it belongs to — HEAD, gitdir, commondir, config.worktree — and the
 *   worktree's own `.git` file are mounted read-only, so nothing written inside can redirect git commands
 *   that loopfleet later runs outside the sandbox.
 */
import { mkdir, open, readFile, realpath, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { SANDBOX_OBJECTS, discoverGitLayout, type GitLayout } from './git-layout.js';
import { isInside } from './fs-paths.js';
import type { SandboxMount } from '../ports/process.js';

/** Where the repository's common folder appears inside the sandbox, with the private object store. */
export const SHADOW_GIT_DIR = '/tmp/.loopfleet/git';
/** Host file holding SHADOW_GIT_DIR, mounted over the worktree's `commondir` inside the sandbox. */
const SHADOW_COMMONDIR_FILE = 'loopfleet-commondir';

/** Options every sandbox gets, after the mounts. */
export const ISOLATION_ARGS = ['--unshare-net', '--unshare-pid', '--die-with-parent', '--new-session'];

export interface SandboxSpec {
  cwd: string;
  /** folders writable besides `cwd`; each must exist */
  writable: string[];
  /** the command's environment: HOME and PATH are read from it */
  env: Record<string, string>;
  /** extra bind mounts, applied after the hidden homes and /tmp (so they may go inside them) */
  mounts?: SandboxMount[];
}

interface Mount {
  readOnly: boolean;
  src: string;
  dest: string;
}


async function isDir(p: string): Promise<boolean> {
  try {
    return (await stat(p)).isDirectory();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return false;
    throw error;
  }
}

async function realFolder(p: string, what: string): Promise<string> {
  try {
    const real = await realpath(p);
    if (!(await isDir(real))) throw new Error(`${what} ${p} is not a folder`);
    return real;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new Error(`${what} ${p} does not exist`);
    throw error;
  }
}

/** Home folders to replace with an empty tmpfs: the user's, and the command's HOME. Never `/`. */
async function homesToHide(env: Record<string, string>): Promise<string[]> {
  const homes = new Set<string>();
  for (const candidate of [os.homedir(), env.HOME]) {
    if (!candidate || !path.isAbsolute(candidate) || !(await isDir(candidate))) continue;
    const real = await realpath(candidate);
    if (real !== '/') homes.add(real);
  }
  return [...homes];
}

/**
 * PATH entries inside a hidden folder (a home: a Node.js installed by nvm, ~/.local/bin; or the host's
 * /tmp: a project checked out there, its node_modules/.bin) come back read-only, so that the tools the
 * command expects are still there: a `bin` folder with its sibling `lib`, a `node_modules/.bin` with the
 * whole `node_modules` its links point into.
 */
async function toolchainMounts(env: Record<string, string>, hidden: string[], writable: string[]): Promise<Mount[]> {
  const mounts: Mount[] = [];
  const add = async (dest: string) => {
    if (!mounts.some((m) => isInside(dest, m.dest))) mounts.push({ readOnly: true, src: await realpath(dest), dest });
  };
  for (const entry of (env.PATH ?? '').split(':')) {
    if (!path.isAbsolute(entry)) continue;
    const dest = path.normalize(entry);
    const root = hidden.find((h) => isInside(dest, h) && dest !== h);
    if (!root || writable.some((w) => isInside(dest, w)) || !(await isDir(dest))) continue;
    const parent = path.dirname(dest);
    if (path.basename(dest) === '.bin' && path.basename(parent) === 'node_modules') {
      await add(parent);
      continue;
    }
    await add(dest);
    const lib = path.join(parent, 'lib');
    if (path.basename(dest) === 'bin' && parent !== root && (await isDir(lib))) await add(lib);
  }
  return mounts;
}

async function ensureFile(p: string, content?: string): Promise<void> {
  if (content === undefined) {
    await (await open(p, 'a')).close();
    return;
  }
  let current: string | null = null;
  try {
    current = await readFile(p, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (current !== content) await writeFile(p, content);
}

/** Mounts that keep git usable, and the repository safe, inside the sandbox (see the module comment). */
async function gitMounts(layout: GitLayout): Promise<Mount[]> {
  const common = await realpath(layout.commonDir);
  if (!layout.linked) return [{ readOnly: true, src: common, dest: common }];

  const admin = await realpath(layout.adminDir);
  const store = path.join(admin, SANDBOX_OBJECTS);
  // Rewritten before every sandboxed command: whatever a previous one wrote there is not trusted.
  await mkdir(path.join(store, 'info'), { recursive: true });
  await ensureFile(path.join(store, 'info', 'alternates'), `${path.join(common, 'objects')}\n`);
  await ensureFile(path.join(admin, SHADOW_COMMONDIR_FILE), `${SHADOW_GIT_DIR}\n`);
  // Read by git when extensions.worktreeConfig is on: it must exist to be mounted read-only.
  await ensureFile(path.join(admin, 'config.worktree'));

  const ro = (src: string, dest = src): Mount => ({ readOnly: true, src, dest });
  return [
    ro(common),
    ro(common, SHADOW_GIT_DIR),
    { readOnly: false, src: store, dest: path.join(SHADOW_GIT_DIR, 'objects') },
    { readOnly: false, src: admin, dest: admin },
    ro(path.join(admin, 'HEAD')),
    ro(path.join(admin, 'gitdir')),
    ro(path.join(admin, 'config.worktree')),
    ro(path.join(admin, SHADOW_COMMONDIR_FILE), path.join(admin, 'commondir')),
    ro(layout.dotGit),
  ];
}

function depth(p: string): number {
  return p.split('/').filter(Boolean).length;
}

/**
 * bwrap arguments up to (not including) `--` and the command. Prepares the worktree's admin folder on
 * the host as a side effect (see gitMounts). Throws when `cwd` or a writable folder does not exist.
 */
export async function sandboxArgs(spec: SandboxSpec): Promise<string[]> {
  const cwd = await realFolder(spec.cwd, 'working folder');
  const writable = [cwd];
  for (const w of spec.writable) {
    const real = await realFolder(w, 'writable folder');
    if (!writable.includes(real)) writable.push(real);
  }
  const homes = await homesToHide(spec.env);
  const layout = await discoverGitLayout(cwd);

  const mounts: Mount[] = [
    ...(await toolchainMounts(spec.env, [...homes, '/tmp'], writable)),
    ...writable.map((w) => ({ readOnly: false, src: w, dest: w })),
    ...(layout ? await gitMounts(layout) : []),
    ...(spec.mounts ?? []),
  ];
  // Outer folders first, so that a deeper mount (a read-only file inside a writable folder) wins.
  // The sort is stable: at equal depth the order above holds.
  mounts.sort((a, b) => depth(a.dest) - depth(b.dest));

  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp'];
  for (const home of homes) args.push('--tmpfs', home);
  for (const m of mounts) args.push(m.readOnly ? '--ro-bind' : '--bind', m.src, m.dest);
  args.push(...ISOLATION_ARGS, '--chdir', cwd);
  return args;
}

/** The smallest sandbox: used to find out whether bubblewrap works on this machine at all. */
export function probeArgs(): string[] {
  return ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', ...ISOLATION_ARGS, '--chdir', '/'];
}
