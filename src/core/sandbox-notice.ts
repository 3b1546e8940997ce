/**
 * What runs unsandboxed, said in one line: the first line of a run (headless log and TUI) when the
 * sandbox is not in force. Setup is not named: outside the sandbox it runs only on the person's own code
 * (setup-step.ts); where it would run agent-written code without a sandbox it is skipped, saying so.
 */
export function sandboxNotice(setting: 'auto' | 'off', sandboxed: boolean): string | null {
  if (sandboxed) return null;
  if (setting === 'off') {
    return 'sandbox: off — checks, the agent shell and command-line agents run agent-written code unsandboxed, with every right of the user running loopfleet';
  }
  return 'no sandbox (bubblewrap cannot run here) — checks of agent-written code are refused and the agent shell is off; command-line agents run unsandboxed. Install bubblewrap, or write `sandbox: off` to run checks unsandboxed';
}
