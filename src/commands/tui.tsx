import { hostSandboxCause } from '../adapters/sandbox/userns-diagnosis.js';
import { UsageError } from '../domain/errors.js';
import type { Fleet } from '../core/fleet/fleet.js';
import { runEditor } from '../ui/editor.js';
import { renderTui } from '../ui/render-tui.js';
import { EXIT_INTERRUPTED, runExitCode } from './overnight.js';
import type { Repo } from './repo.js';
import { openSession, type SessionOptions } from './session.js';

/**
 * The exit code once the person has quit: 130 when the quit stopped a task this run had started before it
 * finished (it is queued again for the next start), otherwise as for a headless run.
 */
export function tuiExitCode(fleet: Fleet): number {
  if (fleet.stoppedBy !== null) return runExitCode(fleet);
  for (const id of fleet.ranThisRun) {
    const status = fleet.task(id)?.status;
    if (status === 'queued' || status === 'running') return EXIT_INTERRUPTED;
  }
  return runExitCode(fleet);
}

/** `loopfleet`: the fleet with the Ink TUI over it. The engine is the same one `--overnight` drives. */
export async function tui(repo: Repo, options: SessionOptions & { color: boolean }): Promise<number> {
  if (!process.stdout.isTTY || !process.stdin.isTTY) {
    throw new UsageError(
      'loopfleet needs a terminal for its interactive view; run `loopfleet --overnight` for a headless run',
    );
  }
  const session = await openSession(repo, { ...options, watch: true });
  const { fleet } = session;
  try {
    const sandboxCause = fleet.sandboxed || fleet.config.sandbox === 'off' ? null : await hostSandboxCause();
    fleet.start();
    // A pull request an earlier run failed to open, or was killed while opening, is opened or adopted; the
    // view does not wait for the forge (PR operations run one after another behind it).
    if (fleet.landsByPr) void fleet.openPending().catch(() => undefined);
    await renderTui(fleet, {
      color: options.color,
      sandboxCause,
      startNotice:
        session.queueNotice === null ? null : { level: session.queueNotice.level, text: session.queueNotice.message },
      onEditBacklog: () => runEditor(fleet.backlogPath),
    });
    await session.close();
    return tuiExitCode(fleet);
  } finally {
    await session.close();
  }
}
