/**
 * bubblewrap arguments that confine a command. The sandbox promises (and the self-test in
 * sandbox-selftest.ts checks before a fleet starts):
 * - least privilege: a user namespace with every capability dropped; under root the command runs as an
 *   unprivileged uid/gid inside (SANDBOX_UID), so it can neither mount nor remount anything;
 * - only what the task needs is visible: the system folders read-only (private files of /etc covered),
 *   the tools on PATH, `cwd` and the listed folders writable, a private /tmp, /proc and /dev; no home
 *   folder, no /run, /var, no host /tmp — so no host Unix socket by path; abstract sockets and every
 *   network are behind the network namespace; SysV IPC behind the IPC namespace;
 * - HOME is an empty private folder (SANDBOX_HOME); its own process tree, killed with loopfleet.
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
 * Files the command writes belong, outside, to the user running loopfleet (the namespace maps the
 * sandbox uid to it), so loopfleet commits them as usual.
 */
import { lstat, readdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import { SANDBOX_OBJECTS, discoverGitLayout, type GitLayout } from './git-layout.js';
import { isInside } from './fs-paths.js';
import { realFolderAt, rewriteFile } from './fs-nofollow.js';
import { SYSTEM_FOLDERS, homeFolders, isDir, mountArgs, privateEtcMounts, systemMounts, toolchainMounts, type Mount } from './sandbox-system.js';
import type { SandboxMount } from '../ports/process.js';
import { caMounts } from './sandbox-ca.js';

/** Where the repository's common folder appears inside the sandbox, with the private object store. */
export const SHADOW_GIT_DIR = '/tmp/.loopfleet/git';
/** HOME inside the sandbox: an empty folder of its private /tmp. */
export const SANDBOX_HOME = '/tmp/.loopfleet/home';
/** The uid and gid a command runs as inside the sandbox: `nobody`, never root. */
export const SANDBOX_UID = 65534;
/** Host file holding SHADOW_GIT_DIR, mounted over the worktree's `commondir` inside the sandbox. */
const SHADOW_COMMONDIR_FILE = 'loopfleet-commondir';

/** Options of the sandbox itself, after the mounts: each concern is one small function below. */
export interface IsolationOptions {
  /** uid and gid inside the user namespace */
  uid: number;
}

function privilegeArgs(o: IsolationOptions): string[] {
  return ['--unshare-user', '--uid', String(o.uid), '--gid', String(o.uid), '--cap-drop', 'ALL'];
}

function namespaceArgs(): string[] {
  return ['--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try'];
}

/** No network: a namespace of its own, with only its own loopback. (An allow-list option plugs in here.) */
function networkArgs(): string[] {
  return ['--unshare-net'];
}

function lifetimeArgs(): string[] {
  return ['--die-with-parent', '--new-session'];
}

export function isolationArgs(o: IsolationOptions = { uid: SANDBOX_UID }): string[] {
  return [...privilegeArgs(o), ...namespaceArgs(), ...networkArgs(), ...lifetimeArgs()];
}

/**
 * /proc of its own pid namespace, a minimal /dev, a private /tmp, and HOME: an empty folder in that /tmp,
 * or `home` — the path a CLI agent's config folders are mounted under; nothing else of it is visible.
 */
function privateArgs(home: string | undefined): string[] {
  const at = home ?? SANDBOX_HOME;
  return ['--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp', '--dir', at, '--setenv', 'HOME', at];
}

export interface SandboxSpec {
  cwd: string;
  /** folders writable besides `cwd`; each must exist */
  writable: string[];
  /** the command's environment: PATH (tools to bring in) and HOME (a home to keep hidden) are read from it */
  env: Record<string, string>;
  /** extra bind mounts, applied after the hidden homes and /tmp (so they may go inside them) */
  mounts?: SandboxMount[];
  /** HOME inside, when a CLI agent's own config folders are mounted under it; default an empty private folder */
  home?: string;
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

/**
 * `p` is loopfleet's regular file afterwards (empty when created without `content`). The admin folder is
 * writable inside the sandbox: a link an agent left in a file's place is replaced, never written through.
 */
async function ensureFile(p: string, content?: string): Promise<void> {
  if (content !== undefined) return rewriteFile(p, content);
  const info = await lstat(p).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  if (info?.isFile() === true) return;
  return rewriteFile(p, '');
}

/** Mounts that keep git usable, and the repository safe, inside the sandbox (see the module comment). */
/**
 * Unix sockets git keeps in its folders (the fsmonitor daemon's `fsmonitor--daemon.ipc`), covered by
 * /dev/null at each place the folder is mounted: a socket on a read-only mount still accepts connections.
 */
async function gitSockets(dir: string, places: string[]): Promise<Mount[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  return entries
    .filter((e) => e.isSocket())
    .flatMap((e) => places.map((place): Mount => ({ kind: 'empty', dest: path.join(place, e.name) })));
}

async function gitMounts(layout: GitLayout): Promise<Mount[]> {
  const common = await realpath(layout.commonDir);
  if (!layout.linked) return [{ kind: 'ro', src: common, dest: common }, ...(await gitSockets(common, [common]))];

  const admin = await realpath(layout.adminDir);
  const store = path.join(admin, SANDBOX_OBJECTS);
  // Rewritten before every sandboxed command: whatever a previous one wrote there is not trusted.
  // Both folders are the sandbox's to write: a link in either's place is replaced by a real folder.
  await realFolderAt(store);
  await realFolderAt(path.join(store, 'info'));
  await ensureFile(path.join(store, 'info', 'alternates'), `${path.join(common, 'objects')}\n`);
  await ensureFile(path.join(admin, SHADOW_COMMONDIR_FILE), `${SHADOW_GIT_DIR}\n`);
  // Read by git when extensions.worktreeConfig is on: it must exist to be mounted read-only.
  await ensureFile(path.join(admin, 'config.worktree'));

  const ro = (src: string, dest = src): Mount => ({ kind: 'ro', src, dest });
  return [
    ro(common),
    ro(common, SHADOW_GIT_DIR),
    { kind: 'rw', src: store, dest: path.join(SHADOW_GIT_DIR, 'objects') },
    { kind: 'rw', src: admin, dest: admin },
    ro(path.join(admin, 'HEAD')),
    ro(path.join(admin, 'gitdir')),
    ro(path.join(admin, 'config.worktree')),
    ro(path.join(admin, SHADOW_COMMONDIR_FILE), path.join(admin, 'commondir')),
    ro(layout.dotGit),
    ...(await gitSockets(common, [common, SHADOW_GIT_DIR])),
    ...(await gitSockets(admin, [admin])),
  ];
}

function depth(p: string): number {
  return p.split('/').filter(Boolean).length;
}

/**
 * bwrap arguments up to (not including) `--` and the command. Prepares the worktree's admin folder on
 * the host as a side effect (see gitMounts). Throws when `cwd` or a writable folder does not exist.
 */
export async function sandboxArgs(spec: SandboxSpec, isolation?: IsolationOptions): Promise<string[]> {
  const cwd = await realFolder(spec.cwd, 'working folder');
  const writable = [cwd];
  for (const w of spec.writable) {
    const real = await realFolder(w, 'writable folder');
    if (!writable.includes(real)) writable.push(real);
  }
  const homes = await homeFolders(spec.env);
  const layout = await discoverGitLayout(cwd);

  // A home inside a system folder (/opt/someone) is emptied; the others are simply not mounted.
  const homesInSystem: Mount[] = homes
    .filter((h) => SYSTEM_FOLDERS.some((s) => isInside(h, s)) && !writable.some((w) => isInside(w, h)))
    .map((dest) => ({ kind: 'tmpfs', dest }));
  const mounts: Mount[] = [
    ...(await systemMounts()),
    ...(await privateEtcMounts()),
    ...homesInSystem,
    ...(await toolchainMounts(spec.env, homes, writable)),
    ...writable.map((w): Mount => ({ kind: 'rw', src: w, dest: w })),
    ...(layout ? await gitMounts(layout) : []),
    ...(await caMounts(spec.env)),
    ...(spec.mounts ?? []).map((m): Mount => ({ kind: m.readOnly ? 'ro' : 'rw', src: m.src, dest: m.dest })),
  ];
  // Outer folders first, so that a deeper mount (a read-only file inside a writable folder) wins.
  // The sort is stable: at equal depth the order above holds.
  mounts.sort((a, b) => depth(a.dest) - depth(b.dest));

  const args = privateArgs(spec.home);
  for (const m of mounts) args.push(...mountArgs(m));
  // bubblewrap's own root (a tmpfs holding the mount points) is read-only once everything is mounted.
  args.push('--remount-ro', '/', ...isolationArgs(isolation), '--chdir', cwd);
  return args;
}

/**
 * The smallest sandbox, with the same isolation as every other: used to find out whether bubblewrap
 * works on this machine at all (user namespaces included).
 */
export async function probeArgs(): Promise<string[]> {
  const args = ['--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp'];
  for (const m of await systemMounts()) args.push(...mountArgs(m));
  return [...args, '--remount-ro', '/', ...isolationArgs(), '--chdir', '/'];
}
