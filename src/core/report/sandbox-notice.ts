import type { SandboxCause } from '../../domain/sandbox-cause.js';

/**
 * What runs unsandboxed, said in one line: the first line of a run (headless log and TUI) when the
 * sandbox is not in force. Setup is not named: outside the sandbox it runs only on the person's own code
 * ({@link runSetup}); where it would run agent-written code without a sandbox it is skipped, saying so.
 * With the host's diagnosis (`cause`) the line names what stops bubblewrap and the fix for it.
 */
export function sandboxNotice(
  setting: 'auto' | 'off',
  sandboxed: boolean,
  cause: SandboxCause | null = null,
): string | null {
  if (sandboxed) return null;
  if (setting === 'off') {
    return 'sandbox: off — checks, the agent shell and command-line agents run agent-written code unsandboxed, with every right of the user running loopfleet';
  }
  const refused =
    'checks of agent-written code are refused and the agent shell is off; command-line agents run unsandboxed';
  if (cause === null)
    return `no sandbox (bubblewrap cannot run here) — ${refused}. Install bubblewrap, or write \`sandbox: off\` to run checks unsandboxed`;
  return `no sandbox (bubblewrap cannot run here: ${cause.message}) — ${refused}. Fix: ${cause.fix}; or write \`sandbox: off\` to run checks unsandboxed`;
}
