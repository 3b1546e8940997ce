/**
 * Why bubblewrap cannot run on this host, and the exact fix: read from the sysctls that govern user
 * namespaces, the AppArmor profiles Ubuntu ships for bubblewrap, the signs of a container, and bubblewrap's
 * own error from a probe. The sysctls that restrict unprivileged user namespaces are not blamed for a
 * process holding CAP_SYS_ADMIN, which they do not restrict. Exactly one cause is named: the first of
 *   platform → missing → userns-limit → userns-clone → container (when the namespace could not even be
 *   made) → apparmor → container → unknown
 * that the facts support. A fix that weakens the host for every program says so, with its risk.
 */
import { oneLine } from '../../domain/sanitize.js';
import type { SandboxCause } from '../../domain/sandbox-cause.js';
import type { BwrapProbe, UsernsFacts } from '../../ports/userns-facts.js';
import { hostUsernsFacts } from './userns-host-facts.js';

export const RESTRICT_SYSCTL = '/proc/sys/kernel/apparmor_restrict_unprivileged_userns';
export const MAX_USERNS_SYSCTL = '/proc/sys/user/max_user_namespaces';
export const CLONE_SYSCTL = '/proc/sys/kernel/unprivileged_userns_clone';
/** Ubuntu 25.04+ ships it in the apparmor package; 24.04 in apparmor-profiles, under extra-profiles. */
export const BWRAP_PROFILE = '/etc/apparmor.d/bwrap-userns-restrict';
export const EXTRA_BWRAP_PROFILE = '/usr/share/apparmor/extra-profiles/bwrap-userns-restrict';
/** The program the shipped profile attaches to: a bwrap elsewhere is not covered by it. */
const PROFILED_BWRAP = '/usr/bin/bwrap';
const DETAIL_CHARS = 240;

const APPARMOR_SYSCTL_RISK =
  'sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 lifts the restriction for every program instead ' +
  '(its risk: any unprivileged process may again make user namespaces, the kernel attack surface the restriction closes)';

/** bubblewrap's words when the namespace itself could not be made (seccomp, a missing capability). */
const UNSHARE_REFUSED =
  /No permissions to creat\w* (a )?new namespace|Creating new namespace failed: Operation not permitted|unshare.*Operation not permitted/i;
const NESTING = /ENOSPC|No space left on device|max_\S*namespaces exceeded/i;
const PROC_MASKED = /Can't mount proc/i;

const sh = (s: string): string => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/** The line of bubblewrap's stderr that names what failed, safe for a terminal. */
function errorLine(probe: BwrapProbe): string {
  const lines = probe.stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  const line =
    lines.findLast((l) => l.startsWith('bwrap:')) ??
    lines.at(-1) ??
    `exit ${probe.exitCode ?? 'by a signal'}, nothing on stderr`;
  const shown = oneLine(line);
  return shown.length > DETAIL_CHARS ? `${shown.slice(0, DETAIL_CHARS)}…` : shown;
}

function sysctl(text: string | null): number | null {
  if (text === null) return null;
  const n = Number.parseInt(text.trim(), 10);
  return Number.isNaN(n) ? null : n;
}

/** CAP_SYS_ADMIN in CapEff: the sysctls that restrict *unprivileged* user namespaces do not apply. */
const CAP_SYS_ADMIN = 21n;
function privileged(status: string): boolean {
  const hex = /^CapEff:\s*([0-9a-f]+)\s*$/m.exec(status)?.[1];
  return hex !== undefined && (BigInt(`0x${hex}`) & (1n << CAP_SYS_ADMIN)) !== 0n;
}

function persist(setting: string): string {
  return `sudo sysctl -w ${setting} (to keep it after a reboot: echo ${setting} | sudo tee /etc/sysctl.d/90-bubblewrap.conf)`;
}

/** The one command that installs bubblewrap with this host's package manager. */
export async function bubblewrapInstallCommand(
  facts: UsernsFacts,
  root: boolean = process.getuid?.() === 0,
): Promise<string> {
  const sudo = root ? '' : 'sudo ';
  const managers: Array<[string, string]> = [
    ['apt-get', 'apt-get install bubblewrap'],
    ['dnf', 'dnf install bubblewrap'],
    ['pacman', 'pacman -S bubblewrap'],
    ['zypper', 'zypper install bubblewrap'],
    ['apk', 'apk add bubblewrap'],
  ];
  for (const [program, command] of managers) if ((await facts.which(program)) !== null) return `${sudo}${command}`;
  return `${sudo}apt-get install bubblewrap`;
}

/** A profile that lets `bwrap` (and only it) make user namespaces, as one command that writes and loads it. */
export function bwrapProfileCommand(bwrap: string): string {
  const lines = [
    'abi <abi/4.0>,',
    'include <tunables/global>',
    `profile loopfleet-bwrap "${bwrap}" flags=(unconfined) {`,
    '  userns,',
    '}',
  ];
  return `printf '%s\\n' ${lines.map(sh).join(' ')} | sudo tee /etc/apparmor.d/loopfleet-bwrap && sudo apparmor_parser -r /etc/apparmor.d/loopfleet-bwrap`;
}

async function apparmorFix(facts: UsernsFacts, bwrap: string): Promise<string> {
  const load = `sudo apparmor_parser -r ${BWRAP_PROFILE}`;
  if (bwrap !== PROFILED_BWRAP) {
    const order = (await facts.exists(PROFILED_BWRAP))
      ? `put /usr/bin before ${bwrap.slice(0, bwrap.lastIndexOf('/'))} on PATH, or `
      : '';
    return `the profile Ubuntu ships covers ${PROFILED_BWRAP} only: ${order}give this bwrap a profile: ${bwrapProfileCommand(bwrap)}; or ${APPARMOR_SYSCTL_RISK}`;
  }
  if (await facts.exists(BWRAP_PROFILE))
    return `load the profile Ubuntu ships for bubblewrap: ${load}; or ${APPARMOR_SYSCTL_RISK}`;
  const install = `sudo install -m 0644 ${EXTRA_BWRAP_PROFILE} ${BWRAP_PROFILE} && ${load}`;
  if (await facts.exists(EXTRA_BWRAP_PROFILE))
    return `install and load the profile Ubuntu ships for bubblewrap: ${install}; or ${APPARMOR_SYSCTL_RISK}`;
  return `install and load the profile Ubuntu ships for bubblewrap: sudo apt install apparmor-profiles && ${install}; or ${APPARMOR_SYSCTL_RISK}`;
}

interface Container {
  runtime: 'docker' | 'podman' | 'kubernetes' | 'a';
  seccomp: boolean;
}

/** Signs that this process runs in a container, or null. */
async function containerOf(facts: UsernsFacts, status: string): Promise<Container | null> {
  const cgroup = (await facts.read('/proc/1/cgroup')) ?? '';
  const seccomp = /^Seccomp:\s*2\s*$/m.test(status);
  if (await facts.exists('/run/.containerenv')) return { runtime: 'podman', seccomp };
  if (/kubepods/.test(cgroup)) return { runtime: 'kubernetes', seccomp };
  if ((await facts.exists('/.dockerenv')) || /docker/.test(cgroup)) return { runtime: 'docker', seccomp };
  if (/containerd|libpod|lxc/.test(cgroup)) return { runtime: 'a', seccomp };
  return null;
}

function containerCause(c: Container, detail: string): SandboxCause {
  const proc = PROC_MASKED.test(detail);
  const what = proc ? 'masked /proc' : c.seccomp ? 'seccomp filter' : 'security settings';
  const message = `this runs in ${c.runtime === 'a' ? 'a' : `a ${c.runtime}`} container whose ${what} ${what.endsWith('s') ? 'forbid' : 'forbids'} the namespaces bubblewrap makes`;
  const privileged = 'or run it --privileged, which gives the container every right of the host';
  let fix: string;
  switch (c.runtime) {
    case 'podman':
      fix = `run the container with --security-opt seccomp=unconfined${proc ? ' --security-opt unmask=ALL' : ''}, ${privileged}`;
      break;
    case 'kubernetes':
      fix = `give the pod securityContext.seccompProfile.type: Unconfined and appArmorProfile.type: Unconfined${proc ? ' and procMount: Unmasked' : ''}, or make it privileged (every right of the node)`;
      break;
    default:
      fix = `run the container with --security-opt seccomp=unconfined --security-opt apparmor=unconfined${proc ? ' --security-opt systempaths=unconfined' : ''} (add --cap-add SYS_ADMIN if it still fails), ${privileged}`;
  }
  return { kind: 'container', message, fix, detail };
}

/** What stops bubblewrap on the host `facts` describe; null when its probe runs. */
export async function diagnoseSandbox(facts: UsernsFacts): Promise<SandboxCause | null> {
  if (facts.platform !== 'linux') {
    return {
      kind: 'platform',
      message: `bubblewrap is Linux-only and this is ${facts.platform}`,
      fix: 'see docs/security.md, "When bubblewrap cannot run"',
    };
  }
  const bwrap = await facts.which('bwrap');
  if (bwrap === null)
    return {
      kind: 'missing',
      message: 'bubblewrap (bwrap) is not installed',
      fix: `install it: ${await bubblewrapInstallCommand(facts)}`,
    };
  const probe = await facts.probe(bwrap);
  if (probe.exitCode === 0) return null;
  const detail = errorLine(probe);

  const max = sysctl(await facts.read(MAX_USERNS_SYSCTL));
  if (max === 0)
    return {
      kind: 'userns-limit',
      message: 'user namespaces are switched off: user.max_user_namespaces is 0',
      fix: persist('user.max_user_namespaces=15000'),
      detail,
    };
  if (NESTING.test(probe.stderr)) {
    return {
      kind: 'userns-limit',
      message: `no further user namespace can be made: loopfleet runs inside a sandbox or container that forbids nesting one, or all ${max ?? 'allowed'} user namespaces are in use`,
      fix: `run loopfleet outside that sandbox (or one that allows nesting: no --disable-userns), or raise the limit: ${persist('user.max_user_namespaces=15000')}`,
      detail,
    };
  }
  const status = (await facts.read('/proc/self/status')) ?? '';
  const unprivileged = !privileged(status);
  if (unprivileged && sysctl(await facts.read(CLONE_SYSCTL)) === 0) {
    return {
      kind: 'userns-clone',
      message: 'this kernel lets only root make user namespaces: kernel.unprivileged_userns_clone is 0',
      fix: persist('kernel.unprivileged_userns_clone=1'),
      detail,
    };
  }
  const container = await containerOf(facts, status);
  if (container !== null && (UNSHARE_REFUSED.test(probe.stderr) || PROC_MASKED.test(probe.stderr)))
    return containerCause(container, detail);
  if (unprivileged && sysctl(await facts.read(RESTRICT_SYSCTL)) === 1) {
    return {
      kind: 'apparmor',
      message: `AppArmor lets only programs with a profile make user namespaces (kernel.apparmor_restrict_unprivileged_userns=1), and none covers ${bwrap}`,
      fix: await apparmorFix(facts, bwrap),
      detail,
    };
  }
  if (container !== null) return containerCause(container, detail);
  return {
    kind: 'unknown',
    message: `bubblewrap fails: ${detail}`,
    fix: `${sh(bwrap)} --unshare-user --unshare-net --ro-bind / / true shows its error; a security module (SELinux, a seccomp filter) may forbid user namespaces`,
    detail,
  };
}

let host: Promise<SandboxCause | null> | undefined;

/** diagnoseSandbox on this host, once per process (the probe starts a process). */
export function hostSandboxCause(): Promise<SandboxCause | null> {
  host ??= diagnoseSandbox(hostUsernsFacts());
  return host;
}
