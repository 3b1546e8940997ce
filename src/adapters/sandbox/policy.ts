/**
 * The sandbox of one command as plain data: which paths it sees and how, its network, its process limits.
 * Computed once per sandboxed command from the spec and the machine's facts, then handed to an enforcer
 * ({@link bwrapArgs} on Linux, {@link srtSettings} — sandbox-runtime's Seatbelt profile — on macOS). The rows
 * are the whole promise; an enforcer renders every row or says, in its module comment, how loopfleet
 * covers the rows it cannot express.
 *
 * Invariants:
 * - nothing is visible unless a row says `read`, `write`, `read-only-over-writable` or `link`; `hidden`
 *   rows name what must stay invisible even where a reader could guess it (homes, /run, host /tmp, the
 *   private files of /etc, git's sockets) so that an enforcer that starts from the whole host can deny them;
 * - a `read-only-over-writable` row lies inside a `write` row and wins over it (deeper rows win);
 * - rows keep the order in which they are computed; enforcers that need it sort by depth themselves.
 *
 * Inside a linked worktree, git keeps working on the worktree's own index, but nothing that git shares
 * with the repository can be changed — refs (other branches), hooks, config, the object store:
 * - the repository's common folder is read-only, twice: at its own path, and at SHADOW_GIT_DIR where its
 *   `objects` is replaced by the worktree's private, writable store (SANDBOX_OBJECTS, with the shared store
 *   as an alternate); the worktree's `commondir` is pointed at SHADOW_GIT_DIR, so the redirection applies to
 *   this repository only, never to another repository the command creates;
 * - the worktree's admin folder stays writable (index, index.lock, logs) but the files that decide which
 *   repository and which branch it belongs to — HEAD, gitdir, config.worktree, commondir — and the
 *   worktree's own `.git` file are read-only, so nothing written inside can redirect git commands that
 *   loopfleet later runs outside the sandbox. (`gitObjects` names the private store for an enforcer that
 *   cannot show a folder at another path: it redirects git through GIT_OBJECT_DIRECTORY instead.)
 */
import { lstat, readdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import type { SandboxMount } from '../../ports/process.js';
import { isInside } from '../fs/paths.js';
import { realFolderAt, rewriteFile } from '../fs/nofollow.js';
import { SANDBOX_OBJECTS, discoverGitLayout, type GitLayout } from '../git/layout.js';
import { caMounts } from './ca.js';
import {
  SYSTEM_FOLDERS,
  homeFolders,
  isDir,
  privateEtcMounts,
  systemMounts,
  toolchainMounts,
  type Mount,
} from './system.js';

/** Where the repository's common folder appears inside the sandbox, with the private object store. */
export const SHADOW_GIT_DIR = '/tmp/.loopfleet/git';
/** HOME inside the sandbox: an empty folder of its private /tmp. */
export const SANDBOX_HOME = '/tmp/.loopfleet/home';
/** The uid and gid a command runs as inside the sandbox: `nobody`, never root. */
export const SANDBOX_UID = 65534;
/** Host file holding SHADOW_GIT_DIR, shown over the worktree's `commondir` inside the sandbox. */
const SHADOW_COMMONDIR_FILE = 'loopfleet-commondir';

/** Top folders of the host that gather homes, sockets and other users' data: never visible. */
export const HIDDEN_ROOTS: readonly string[] = ['/run', '/var', '/srv', '/mnt', '/media', '/tmp'];

export type PolicyRow =
  /** `source` on the host, seen at `path` (the same path unless the enforcer can show it elsewhere) */
  | { access: 'read' | 'write' | 'read-only-over-writable'; path: string; source: string; why: string }
  /** absent: not there at all; empty-file / empty-folder: covered inside a visible folder */
  | { access: 'hidden'; path: string; cover: 'absent' | 'empty-file' | 'empty-folder'; why: string }
  | { access: 'link'; path: string; target: string; why: string }
  /** the sandbox's own: /proc of its pid namespace, a minimal /dev, an empty /tmp, the HOME folder in it */
  | { access: 'private'; path: string; kind: 'proc' | 'dev' | 'tmpfs' | 'dir'; why: string }
  /** the egress proxy's Unix socket (`source`), the only way out */
  | { access: 'proxy-socket'; path: string; source: string; why: string };

export type Access = PolicyRow['access'];

export interface SandboxPolicy {
  /** the working folder (real path) */
  cwd: string;
  /** HOME inside the sandbox */
  home: string;
  rows: PolicyRow[];
  /** the command's environment: the allow-list as the caller built it, unchanged */
  env: Record<string, string>;
  network: {
    /** host path of the egress proxy's socket; null: no network at all */
    proxySocket: string | null;
    /** the hosts that proxy lets through (it enforces them; listed for the record) */
    allowedHosts: string[];
  };
  process: {
    uid: number;
    /** every capability dropped, also under root */
    capabilities: 'none';
    /** namespaces of its own: user, pid, ipc, uts, cgroup, net (no way back to the host's network) */
    namespaces: readonly string[];
    /** killed with loopfleet; a session of its own (no terminal to inject into) */
    dieWithParent: true;
    newSession: true;
  };
  /** linked worktrees: the private object store and the shared one (its alternate); null otherwise */
  gitObjects: { store: string; shared: string } | null;
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
  /** the hosts the egress proxy allows, when there is one (for the record) */
  allowedHosts?: string[];
}

/** What of the machine decides the policy besides the spec. */
export interface MachineFacts {
  /** the system folders shown read-only; default SYSTEM_FOLDERS (Linux) */
  systemFolders?: readonly string[];
  /** top folders never shown; default HIDDEN_ROOTS (Linux) */
  hiddenRoots?: readonly string[];
  /** uid and gid inside the user namespace; default SANDBOX_UID */
  uid?: number;
}

/**
 * macOS: the folders that hold its programs, libraries, frameworks and the dyld cache (/System,
 * /Library, /usr), Homebrew (/opt), the configuration under /private/etc (/etc is a link to it), the
 * time zones and the `xcode-select` links programs resolve at start. Not shown: /Users (homes),
 * /Volumes, /private/var (per-user temp folders under /var/folders, /var/run's sockets), /private/tmp.
 */
export const DARWIN_FACTS: MachineFacts = {
  systemFolders: [
    '/System',
    '/Library',
    '/usr',
    '/bin',
    '/sbin',
    '/opt',
    '/etc',
    '/private/etc',
    '/private/var/db/timezone',
    '/private/var/select',
    '/Applications/Xcode.app',
  ],
  hiddenRoots: ['/Users', '/Volumes', '/private/var', '/var', '/private/tmp', '/tmp', '/cores', '/Network'],
};

/** The facts of a platform loopfleet has an enforcer for. */
export function machineFacts(platform: NodeJS.Platform): MachineFacts {
  return platform === 'darwin' ? DARWIN_FACTS : {};
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

type Tagged = Mount & { why: string };

const tag =
  (why: string) =>
  (m: Mount): Tagged => ({ ...m, why });

/**
 * Unix sockets git keeps in its folders (the fsmonitor daemon's `fsmonitor--daemon.ipc`), covered at each
 * place the folder is shown: a socket on a read-only mount still accepts connections.
 */
async function gitSockets(dir: string, places: string[]): Promise<Tagged[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  return entries
    .filter((e) => e.isSocket())
    .flatMap((e) =>
      places.map(
        (place): Tagged => ({
          kind: 'empty',
          dest: path.join(place, e.name),
          why: 'a socket git keeps in the repository',
        }),
      ),
    );
}

/** The git rows (see the module comment); prepares the worktree's admin folder on the host. */
async function gitRows(layout: GitLayout): Promise<{ mounts: Tagged[]; objects: SandboxPolicy['gitObjects'] }> {
  const common = await realpath(layout.commonDir);
  if (!layout.linked) {
    return {
      mounts: [
        { kind: 'ro', src: common, dest: common, why: 'the repository: read-only' },
        ...(await gitSockets(common, [common])),
      ],
      objects: null,
    };
  }
  const admin = await realpath(layout.adminDir);
  const store = path.join(admin, SANDBOX_OBJECTS);
  // Rewritten before every sandboxed command: whatever a previous one wrote there is not trusted.
  // Both folders are the sandbox's to write: a link in either's place is replaced by a real folder.
  await realFolderAt(store);
  await realFolderAt(path.join(store, 'info'));
  await ensureFile(path.join(store, 'info', 'alternates'), `${path.join(common, 'objects')}\n`);
  await ensureFile(path.join(admin, SHADOW_COMMONDIR_FILE), `${SHADOW_GIT_DIR}\n`);
  // Read by git when extensions.worktreeConfig is on: it must exist to be shown read-only.
  await ensureFile(path.join(admin, 'config.worktree'));

  const ro = (why: string, src: string, dest = src): Tagged => ({ kind: 'ro', src, dest, why });
  const mounts: Tagged[] = [
    ro('the repository: refs, hooks, config, objects read-only', common),
    ro('the repository again, where the private object store replaces its objects', common, SHADOW_GIT_DIR),
    {
      kind: 'rw',
      src: store,
      dest: path.join(SHADOW_GIT_DIR, 'objects'),
      why: "the worktree's private object store (git add inside)",
    },
    { kind: 'rw', src: admin, dest: admin, why: "the worktree's admin folder: index, logs" },
    ro('which branch the worktree is on', path.join(admin, 'HEAD')),
    ro('where the worktree lives', path.join(admin, 'gitdir')),
    ro("the worktree's own config", path.join(admin, 'config.worktree')),
    ro(
      'which repository the worktree belongs to (the shadow one)',
      path.join(admin, SHADOW_COMMONDIR_FILE),
      path.join(admin, 'commondir'),
    ),
    ro("the worktree's .git file", layout.dotGit),
    ...(await gitSockets(common, [common, SHADOW_GIT_DIR])),
    ...(await gitSockets(admin, [admin])),
  ];
  return { mounts, objects: { store, shared: path.join(common, 'objects') } };
}

async function isSocket(p: string): Promise<boolean> {
  try {
    return (await lstat(p)).isSocket();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

function toRow(m: Tagged, writeRoots: string[]): PolicyRow {
  switch (m.kind) {
    case 'ro':
      // A read-only file or folder inside a writable one: the deeper row wins.
      return {
        access: writeRoots.some((w) => w !== m.dest && isInside(m.dest, w)) ? 'read-only-over-writable' : 'read',
        path: m.dest,
        source: m.src,
        why: m.why,
      };
    case 'rw':
      return { access: 'write', path: m.dest, source: m.src, why: m.why };
    case 'tmpfs':
      return { access: 'hidden', path: m.dest, cover: 'empty-folder', why: m.why };
    case 'empty':
      return { access: 'hidden', path: m.dest, cover: 'empty-file', why: m.why };
    case 'symlink':
      return { access: 'link', path: m.dest, target: m.target, why: m.why };
  }
}

/**
 * The policy of one sandboxed command. Prepares the worktree's admin folder on the host as a side effect
 * (see gitRows). Throws when `cwd` or a writable folder does not exist.
 */
export async function sandboxPolicy(spec: SandboxSpec, facts: MachineFacts = {}): Promise<SandboxPolicy> {
  const systemFolders = facts.systemFolders ?? SYSTEM_FOLDERS;
  const cwd = await realFolder(spec.cwd, 'working folder');
  const writable = [cwd];
  for (const w of spec.writable) {
    const real = await realFolder(w, 'writable folder');
    if (!writable.includes(real)) writable.push(real);
  }
  const homes = await homeFolders(spec.env);
  const layout = await discoverGitLayout(cwd);
  const git = layout ? await gitRows(layout) : { mounts: [], objects: null };

  // A home inside a system folder (/opt/someone) is emptied; the others are simply not shown.
  const inSystem = (h: string) => systemFolders.some((s) => isInside(h, s));
  const homesInSystem = homes.filter((h) => inSystem(h) && !writable.some((w) => isInside(w, h)));
  const extra: Tagged[] = [];
  let proxySocket: string | null = null;
  for (const m of spec.mounts ?? []) {
    if (m.readOnly && (await isSocket(m.src))) proxySocket = m.src;
    extra.push({ kind: m.readOnly ? 'ro' : 'rw', src: m.src, dest: m.dest, why: 'brought in for this command' });
  }
  const mounts: Tagged[] = [
    ...(await systemMounts(systemFolders)).map(tag('a system folder: read-only')),
    ...(await privateEtcMounts()).map(tag('a file of /etc others may not read on the host')),
    ...homesInSystem.map((dest): Tagged => ({ kind: 'tmpfs', dest, why: 'a home folder inside a system folder' })),
    ...(await toolchainMounts(spec.env, homes, writable)).map(tag('a tool chain on PATH: read-only')),
    ...writable.map(
      (w): Tagged => ({
        kind: 'rw',
        src: w,
        dest: w,
        why: w === cwd ? 'the worktree' : 'a writable folder of the task',
      }),
    ),
    ...git.mounts,
    ...(await caMounts(spec.env)).map(tag('a CA bundle the environment names: read-only')),
    ...extra,
  ];
  const writeRoots = mounts.filter((m) => m.kind === 'rw').map((m) => m.dest);
  const rows: PolicyRow[] = mounts.map((m) => {
    const row = toRow(m, writeRoots);
    return row.access === 'read' && row.source === proxySocket
      ? { access: 'proxy-socket', path: row.path, source: row.source, why: 'the egress proxy: the only way out' }
      : row;
  });

  const home = spec.home ?? SANDBOX_HOME;
  // Hidden even where a row shows something beneath (a worktree under /tmp): the deeper row wins.
  const hidden: PolicyRow[] = [
    ...homes
      .filter((h) => !inSystem(h))
      .map((h): PolicyRow => ({ access: 'hidden', path: h, cover: 'absent', why: 'a home folder' })),
    ...(facts.hiddenRoots ?? HIDDEN_ROOTS).map(
      (r): PolicyRow => ({
        access: 'hidden',
        path: r,
        cover: 'absent',
        why:
          r === '/tmp' || r === '/private/tmp'
            ? 'the host /tmp (the sandbox has its own)'
            : "gathers sockets and other users' data",
      }),
    ),
  ];
  const privates: PolicyRow[] = [
    { access: 'private', path: '/proc', kind: 'proc', why: 'its own pid namespace' },
    { access: 'private', path: '/dev', kind: 'dev', why: 'a minimal /dev' },
    { access: 'private', path: '/tmp', kind: 'tmpfs', why: 'an empty /tmp of its own' },
    { access: 'private', path: home, kind: 'dir', why: 'HOME' },
  ];
  return {
    cwd,
    home,
    rows: [...privates, ...rows, ...hidden],
    env: spec.env,
    network: { proxySocket, allowedHosts: spec.allowedHosts ?? [] },
    process: {
      uid: facts.uid ?? SANDBOX_UID,
      capabilities: 'none',
      namespaces: ['user', 'pid', 'ipc', 'uts', 'cgroup', 'net'],
      dieWithParent: true,
      newSession: true,
    },
    gitObjects: git.objects,
  };
}
