/**
 * The macOS enforcer's configuration: a {@link SandboxPolicy} ({@link sandboxPolicy}) as the settings file of
 * `@anthropic-ai/sandbox-runtime` (srt 0.0.83), which turns it into a Seatbelt profile for
 * `sandbox-exec` (deny default; file-write only to `allowWrite` minus `denyWrite`; file-read denied under
 * `denyRead` except `allowRead`; network-outbound only to the proxy port on localhost; no Unix socket at
 * all; process-exec and fork allowed). One srt process per sandboxed command, with its own file
 * ({@link srtCommand}): srt keeps one manager per process, so no two commands share a configuration.
 *
 * Row by row:
 * - read → allowRead; write → allowRead + allowWrite; read-only-over-writable → denyWrite (inside an
 *   allowWrite folder; srt's denyWrite wins over allowWrite);
 * - hidden (every cover) → denyRead, below a `denyRead: ["/"]` that makes reading deny-by-default: only
 *   what a row shows is readable, and a hidden row inside a shown folder (the private files of /etc) is
 *   denied again (srt emits such a deny after the allow it lies in);
 * - link → allowRead of the link's own path (macOS keeps /etc, /tmp, /var as links into /private);
 * - private: /dev → allowRead (srt allows only the harmless device files to be opened for writing);
 *   /proc → nothing (macOS has none); /tmp → a folder of loopfleet's for this command, readable and
 *   writable, named by TMPDIR; HOME → that folder's `home`, or the private copy of the CLI's config;
 * - proxy-socket → the network: srt's own proxies are replaced by loopfleet's egress proxy
 *   (`httpProxyPort`/`socksProxyPort`, a loopback port bridged to the proxy's socket), so the allow-list
 *   is loopfleet's, the same on both platforms; `allowedDomains: []` turns srt's network restriction on;
 * - the process rows (uid, capabilities, namespaces) have no Seatbelt equivalent: see below.
 *
 * Seatbelt cannot show a file at another path, so a row bubblewrap shows elsewhere than its source (the
 * shadow git folder and its object store, a CLI's config copy over ~/.claude) is rendered at its source —
 * never at its path, which may be the person's own folder — and the redirection it stood for is done
 * through the environment (`srtEnvironment`): GIT_OBJECT_DIRECTORY (the private object store, the shared
 * one as its alternate), HOME (the config copy's root, where the copies keep their names), TMPDIR.
 *
 * What srt cannot express, and how loopfleet covers it:
 * - srt always makes /tmp/claude writable (shared by every srt sandbox on the machine) and points TMPDIR
 *   at it: it is denied here (`denyWrite`) and TMPDIR is set to the command's own folder;
 * - srt sets NO_PROXY to loopback and private networks, so a loopback model server would be reached
 *   directly, which Seatbelt then refuses: NO_PROXY is unset inside, so every connection goes through
 *   the egress proxy and its allow-list (a loopback endpoint is allowed there by host and port);
 * - no uid change, no capability set to drop (a macOS process has none; it runs as the person), no pid,
 *   IPC or network namespace: the command is killed with its process group; SysV/POSIX IPC are as srt
 *   allows them; no process limit (no pids cgroup on macOS).
 * srt adds write protections of its own under the working folder (`.gitmodules`, `.vscode/`, shell rc
 * files, …): stricter than the policy, never wider.
 */
import path from 'node:path';
import { isInside } from '../fs/paths.js';
import type { PolicyRow, SandboxPolicy } from './policy.js';

/** The sandbox's own paths, which exist only inside a bubblewrap sandbox. */
const SANDBOX_OWN = '/tmp/.loopfleet';
/** Written and read by every srt sandbox on the machine: never writable here. */
export const SRT_SHARED_TMP: readonly string[] = ['/tmp/claude', '/private/tmp/claude'];

export interface SrtSettings {
  network: {
    allowedDomains: string[];
    deniedDomains: string[];
    httpProxyPort: number;
    socksProxyPort: number;
    allowUnixSockets: string[];
    allowAllUnixSockets: false;
    allowLocalBinding: false;
  };
  filesystem: { denyRead: string[]; allowRead: string[]; allowWrite: string[]; denyWrite: string[] };
  allowPty: false;
  enableWeakerNestedSandbox: false;
  enableWeakerNetworkIsolation: false;
}

export interface SrtExtras {
  /** loopback port of the bridge to the egress proxy */
  proxyPort: number;
  /** the command's own folder: TMPDIR, and HOME's parent unless a config copy is the home */
  privateTmp: string;
  /** folders srt itself needs to read inside (its seccomp helper on Linux) */
  enforcerPaths?: string[];
}

const unique = (xs: string[]): string[] => [...new Set(xs)];

/**
 * Where srt shows a row. Seatbelt cannot show a file at another path, so a row whose source differs from
 * its path (a config copy bound over ~/.claude, the shadow git folder) is shown at its source — never at
 * its path, which is the person's own file — and the environment points the command there. A hidden
 * row at one of the sandbox's own paths (/tmp/.loopfleet/…) has nothing to hide outside bubblewrap.
 */
export function srtPathOf(row: PolicyRow): string | null {
  if ('source' in row && row.source !== row.path) return row.source;
  return isInside(row.path, SANDBOX_OWN) ? null : row.path;
}

/** The lists a row lands in (for the row-by-row test and for srtSettings). */
export function srtRowEntries(
  row: PolicyRow,
  extras: SrtExtras,
): Partial<Record<keyof SrtSettings['filesystem'], string[]>> {
  const at = srtPathOf(row);
  switch (row.access) {
    case 'read':
      return at === null ? {} : { allowRead: [at] };
    case 'write':
      return at === null ? {} : { allowRead: [at], allowWrite: [at] };
    case 'read-only-over-writable':
      // The file the command opens is the one at `path` (the worktree's real `commondir`): both stay unwritable.
      return { allowRead: unique([row.path, row.source]), denyWrite: unique([row.path, row.source]) };
    case 'hidden':
      return at === null ? {} : { denyRead: [at] };
    case 'link':
      return { allowRead: [row.path] };
    case 'proxy-socket':
      return {};
    case 'private':
      if (row.kind === 'dev') return { allowRead: [row.path] };
      if (row.kind === 'tmpfs') return { allowRead: [extras.privateTmp], allowWrite: [extras.privateTmp] };
      return {};
  }
}

export function srtSettings(policy: SandboxPolicy, extras: SrtExtras): SrtSettings {
  const fs = {
    denyRead: ['/'],
    allowRead: [...(extras.enforcerPaths ?? [])],
    allowWrite: [] as string[],
    denyWrite: [...SRT_SHARED_TMP],
  };
  for (const row of policy.rows) {
    const entries = srtRowEntries(row, extras);
    for (const key of ['denyRead', 'allowRead', 'allowWrite', 'denyWrite'] as const)
      fs[key].push(...(entries[key] ?? []));
  }
  return {
    network: {
      // Empty: srt restricts the network and leaves the allow-list to the proxy on httpProxyPort.
      allowedDomains: [],
      deniedDomains: [],
      httpProxyPort: extras.proxyPort,
      socksProxyPort: extras.proxyPort,
      allowUnixSockets: [],
      allowAllUnixSockets: false,
      allowLocalBinding: false,
    },
    filesystem: {
      denyRead: unique(fs.denyRead),
      allowRead: unique(fs.allowRead),
      allowWrite: unique(fs.allowWrite),
      denyWrite: unique(fs.denyWrite),
    },
    allowPty: false,
    enableWeakerNestedSandbox: false,
    enableWeakerNetworkIsolation: false,
  };
}

/**
 * HOME under srt: the root of the CLI's config copy when the policy shows copies under its home (each
 * copy keeps its name relative to that root), else a folder in the command's own tmp.
 */
export function srtHome(policy: SandboxPolicy, extras: SrtExtras): string {
  for (const row of policy.rows) {
    if (
      row.access !== 'write' ||
      row.source === row.path ||
      !isInside(row.path, policy.home) ||
      row.path === policy.home
    )
      continue;
    const rel = path.relative(policy.home, row.path);
    if (row.source.endsWith(`${path.sep}${rel}`)) return row.source.slice(0, -rel.length - 1);
  }
  return path.join(extras.privateTmp, 'home');
}

/**
 * Variables set inside, after srt's own (which it sets last on the way in): the redirections Seatbelt
 * cannot make with paths. NO_PROXY is unset (see the module comment), so it is listed as null.
 */
export function srtEnvironment(policy: SandboxPolicy, extras: SrtExtras): Record<string, string | null> {
  const env: Record<string, string | null> = {
    HOME: srtHome(policy, extras),
    TMPDIR: extras.privateTmp,
    NO_PROXY: null,
    no_proxy: null,
  };
  if (policy.gitObjects !== null) {
    env.GIT_OBJECT_DIRECTORY = policy.gitObjects.store;
    env.GIT_ALTERNATE_OBJECT_DIRECTORIES = policy.gitObjects.shared;
  }
  return env;
}
