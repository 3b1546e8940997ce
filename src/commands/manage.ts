import { UsageError } from '../domain/errors.js';
import { deferSignals } from './deferred-signals.js';
import { EXIT_INTERRUPTED } from './overnight.js';
import type { Repo } from './repo.js';
import { openSession } from './session.js';

/** merge / discard / retry / approve one task from the command line: the same engine calls as the TUI's keys. */
export async function manage(repo: Repo, action: 'merge' | 'discard' | 'retry' | 'approve', id: string, env: NodeJS.ProcessEnv, out: (line: string) => void): Promise<number> {
  // Held off from before the lock is taken until it is released, so no signal splits git from state.
  const signals = deferSignals((signal) => out(`received ${signal}: finishing the ${action} of ${id} first`));
  let session: Awaited<ReturnType<typeof openSession>> | null = null;
  try {
    session = await openSession(repo, { overrides: {}, autoMerge: false, watch: false, env, requireModel: false });
    const task = session.fleet.task(id);
    if (task === undefined) {
      const known = session.backlog.tasks.map((t) => t.id).join(', ') || 'none';
      throw new UsageError(`no task ${id} in ${repo.backlogPath} (tasks: ${known})`);
    }
    await session.fleet[action](id);
    const after = session.fleet.task(id)!;
    out(`${id} ${after.status}${after.reason === null ? '' : ` — ${after.reason}`}`);
    if (signals.signal !== null) return EXIT_INTERRUPTED;
    return after.status === 'conflict' ? 1 : 0;
  } finally {
    try {
      await session?.close();
    } finally {
      signals.release();
    }
  }
}

export async function prune(repo: Repo, env: NodeJS.ProcessEnv, out: (line: string) => void): Promise<number> {
  const session = await openSession(repo, { overrides: {}, autoMerge: false, watch: false, env, requireModel: false });
  try {
    const result = await session.fleet.prune();
    for (const line of result.removed) out(`removed ${line}`);
    for (const line of result.kept) out(`kept ${line}`);
    if (result.removed.length === 0) out('nothing to prune');
    return 0;
  } finally {
    await session.close();
  }
}

