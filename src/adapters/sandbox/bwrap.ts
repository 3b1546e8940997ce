/**
 * The Linux enforcer: a {@link SandboxPolicy} ({@link sandboxPolicy}) as bubblewrap arguments, row by row.
 *
 * - read / read-only-over-writable / proxy-socket → `--ro-bind source path`; write → `--bind source path`;
 * - hidden: absent → nothing (bubblewrap starts from an empty root, so what is not bound is not there);
 *   empty-file → `/dev/null` bound over it (which the sandbox cannot open); empty-folder → a tmpfs;
 * - link → `--symlink`; private → `--proc`, `--dev`, `--tmpfs`, `--dir` (+ HOME set to it);
 * - the process: a user namespace with the policy's uid and every capability dropped, its own pid, ipc,
 *   uts, cgroup and network namespaces (loopback only: the proxy socket is the way out), killed with
 *   loopfleet, a session of its own.
 * Rows are bound outer folders first, so that a deeper row (a read-only file inside a writable folder)
 * wins; the sort is stable, so at equal depth the policy's order holds. bubblewrap's own root (a tmpfs
 * holding the mount points) is read-only once everything is bound.
 */
import type { PolicyRow, SandboxPolicy } from './policy.js';

function depth(p: string): number {
  return p.split('/').filter(Boolean).length;
}

/** The arguments of one row; empty for a row bubblewrap enforces by not binding anything. */
export function bwrapRowArgs(row: PolicyRow): string[] {
  switch (row.access) {
    case 'read':
    case 'read-only-over-writable':
    case 'proxy-socket':
      return ['--ro-bind', row.source, row.path];
    case 'write':
      return ['--bind', row.source, row.path];
    case 'hidden':
      if (row.cover === 'empty-file') return ['--ro-bind', '/dev/null', row.path];
      if (row.cover === 'empty-folder') return ['--tmpfs', row.path];
      return [];
    case 'link':
      return ['--symlink', row.target, row.path];
    case 'private':
      switch (row.kind) {
        case 'proc':
          return ['--proc', row.path];
        case 'dev':
          return ['--dev', row.path];
        case 'tmpfs':
          return ['--tmpfs', row.path];
        case 'dir':
          return ['--dir', row.path, '--setenv', 'HOME', row.path];
      }
  }
}

export function bwrapProcessArgs(p: SandboxPolicy['process']): string[] {
  const has = (ns: string) => p.namespaces.includes(ns);
  return [
    ...(has('user') ? ['--unshare-user', '--uid', String(p.uid), '--gid', String(p.uid)] : []),
    ...(p.capabilities === 'none' ? ['--cap-drop', 'ALL'] : []),
    ...(has('pid') ? ['--unshare-pid'] : []),
    ...(has('ipc') ? ['--unshare-ipc'] : []),
    ...(has('uts') ? ['--unshare-uts'] : []),
    ...(has('cgroup') ? ['--unshare-cgroup-try'] : []),
    ...(has('net') ? ['--unshare-net'] : []),
    ...(p.dieWithParent ? ['--die-with-parent'] : []),
    ...(p.newSession ? ['--new-session'] : []),
  ];
}

/** bwrap arguments up to (not including) `--` and the command. */
export function bwrapArgs(policy: SandboxPolicy): string[] {
  const args: string[] = [];
  for (const row of policy.rows) if (row.access === 'private') args.push(...bwrapRowArgs(row));
  const bound = policy.rows.filter((r) => r.access !== 'private').sort((a, b) => depth(a.path) - depth(b.path));
  for (const row of bound) args.push(...bwrapRowArgs(row));
  args.push('--remount-ro', '/', ...bwrapProcessArgs(policy.process), '--chdir', policy.cwd);
  return args;
}
