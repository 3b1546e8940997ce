/**
 * Why the sandbox cannot run on this host, as the host's diagnosis found it ({@link diagnoseSandbox}):
 * what `doctor`, the run's first line and the demo's first line say instead of a bare "cannot run".
 */
export type SandboxCauseKind =
  /** not Linux: bubblewrap does not exist there */
  | 'platform'
  /** no `bwrap` on PATH */
  | 'missing'
  /** Ubuntu 23.10+: AppArmor lets only programs with a profile make unprivileged user namespaces */
  | 'apparmor'
  /** Debian's older kernels: kernel.unprivileged_userns_clone=0 */
  | 'userns-clone'
  /** user.max_user_namespaces=0, or the nesting limit reached (inside a sandbox that forbids another) */
  | 'userns-limit'
  /** a container whose seccomp filter, AppArmor profile or masked /proc forbids what bubblewrap does */
  | 'container'
  /** bubblewrap failed for a reason none of the above explains; `detail` holds its own words */
  | 'unknown';

export interface SandboxCause {
  kind: SandboxCauseKind;
  /** one plain sentence, no trailing period: what stops bubblewrap here */
  message: string;
  /** the exact fix: commands to run or settings to change, with their risk where they weaken the host */
  fix: string;
  /** bubblewrap's own error line from the probe, sanitised to one line (absent when it never ran) */
  detail?: string;
}
