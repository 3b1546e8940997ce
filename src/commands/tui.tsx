import { UsageError } from '../core/errors.js';
import { runEditor } from '../ui/editor.js';
import { renderTui } from '../ui/render-tui.js';
import { runExitCode } from './overnight.js';
import type { Repo } from './repo.js';
import { openSession, type SessionOptions } from './session.js';

/** `loopfleet`: the fleet with the Ink TUI over it. The engine is the same one `--overnight` drives. */
export async function tui(repo: Repo, options: SessionOptions & { color: boolean }): Promise<number> {
  if (!process.stdout.isTTY || !process.stdin.isTTY) {
    throw new UsageError('loopfleet needs a terminal for its interactive view; run `loopfleet --overnight` for a headless run');
  }
  const session = await openSession(repo, { ...options, watch: true });
  const { fleet } = session;
  try {
    fleet.start();
    await renderTui(fleet, {
      color: options.color,
      onEditBacklog: () => runEditor(fleet.backlogPath),
    });
    await session.close();
    return runExitCode(fleet);
  } finally {
    await session.close();
  }
}
