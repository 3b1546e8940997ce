/**
 * bubblewrap arguments that confine a command: the command's {@link SandboxPolicy} ({@link sandboxPolicy},
 * where the promises are written down row by row) rendered by {@link bwrapArgs}. The sandbox promises (and
 * the self-test, {@link sandboxSelfTest}, checks before a fleet starts):
 * - least privilege: a user namespace with every capability dropped; under root the command runs as an
 *   unprivileged uid/gid inside (SANDBOX_UID), so it can neither mount nor remount anything;
 * - only what the task needs is visible: the system folders read-only (private files of /etc covered),
 *   the tools on PATH, `cwd` and the listed folders writable, a private /tmp, /proc and /dev; no home
 *   folder, no /run, /var, no host /tmp — so no host Unix socket by path; abstract sockets and every
 *   network are behind the network namespace; SysV IPC behind the IPC namespace;
 * - HOME is an empty private folder (SANDBOX_HOME); its own process tree, killed with loopfleet;
 * - inside a linked worktree git works on the worktree's own index, and nothing it shares with the
 *   repository can be changed (see {@link sandboxPolicy}).
 * Files the command writes belong, outside, to the user running loopfleet (the namespace maps the
 * sandbox uid to it), so loopfleet commits them as usual.
 */
import { bwrapArgs, bwrapProcessArgs } from './bwrap.js';
import { SANDBOX_UID, sandboxPolicy, type SandboxSpec } from './policy.js';
import { mountArgs, systemMounts } from './system.js';

export { SANDBOX_HOME, SANDBOX_UID, SHADOW_GIT_DIR, type SandboxSpec } from './policy.js';

/** Options of the sandbox itself, after the mounts. */
export interface IsolationOptions {
  /** uid and gid inside the user namespace */
  uid: number;
}

export function isolationArgs(o: IsolationOptions = { uid: SANDBOX_UID }): string[] {
  return bwrapProcessArgs({
    uid: o.uid,
    capabilities: 'none',
    namespaces: ['user', 'pid', 'ipc', 'uts', 'cgroup', 'net'],
    dieWithParent: true,
    newSession: true,
  });
}

/**
 * bwrap arguments up to (not including) `--` and the command. Prepares the worktree's admin folder on
 * the host as a side effect (see {@link sandboxPolicy}). Throws when `cwd` or a writable folder does not exist.
 */
export async function sandboxArgs(spec: SandboxSpec, isolation?: IsolationOptions): Promise<string[]> {
  return bwrapArgs(await sandboxPolicy(spec, isolation === undefined ? {} : { uid: isolation.uid }));
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
