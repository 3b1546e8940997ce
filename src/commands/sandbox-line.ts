import { hostSandboxCause } from '../adapters/sandbox/userns-diagnosis.js';
import { sandboxNotice } from '../core/report/sandbox-notice.js';

/**
 * The run's sandbox line (headless and --watch): null when the sandbox is in force; otherwise what runs
 * unsandboxed, and, under `sandbox: auto`, what stops bubblewrap on this host and how to fix it.
 */
export async function runSandboxNotice(setting: 'auto' | 'off', sandboxed: boolean): Promise<string | null> {
  if (sandboxed) return null;
  return sandboxNotice(setting, false, setting === 'auto' ? await hostSandboxCause() : null);
}
