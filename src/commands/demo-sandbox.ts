import type { SandboxCause } from '../domain/sandbox-cause.js';

/**
 * The demo without bubblewrap. Its agent is the bundled scripted model and its checks are the demo
 * project's own files (backlog/demo-repo), so they may run unsandboxed — for the demo alone: the
 * exception is an override of that one session, never written to a backlog, and a real repository
 * without bubblewrap still has its checks refused.
 */

/** The demo's first line where bubblewrap cannot run: why (the host's diagnosis), what runs unsandboxed, the fix. */
export function unsandboxedDemoNotice(cause: SandboxCause | null): string {
  const why = cause === null ? 'bubblewrap cannot run here' : `bubblewrap cannot run here: ${cause.message}`;
  const fix = cause === null ? 'see docs/security.md, "When bubblewrap cannot run"' : cause.fix;
  return (
    `loopfleet demo: no sandbox (${why}), so the demo's checks run unsandboxed — its agent is the bundled scripted model and its ` +
    `checks are the demo project's own files; a real repository is refused without it (fix: ${fix})`
  );
}
