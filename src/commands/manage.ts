import { UsageError } from '../domain/errors.js';
import { oneLine } from '../domain/sanitize.js';
import { deferSignals } from './deferred-signals.js';
import { EXIT_INTERRUPTED } from './overnight.js';
import type { Repo } from './repo.js';
import { openSession } from './session.js';

/** merge / discard / retry / approve one task from the command line: the same engine calls as the TUI's keys. */
export async function manage(
  repo: Repo,
  action: 'merge' | 'discard' | 'retry' | 'approve',
  id: string,
  env: NodeJS.ProcessEnv,
  out: (line: string) => void,
): Promise<number> {
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
    out(oneLine(`${id} ${after.status}${after.reason === null ? '' : ` — ${after.reason}`}`));
    if (signals.signal !== null) return EXIT_INTERRUPTED;
    // A merge that sent the task back (its branch failed its checks here) did not merge it.
    return after.status === 'conflict' || (action === 'merge' && after.status === 'queued') ? 1 : 0;
  } finally {
    try {
      await session?.close();
    } finally {
      signals.release();
    }
  }
}

/**
 * `loopfleet merge --all`: the merge queue. A signal stops it after the task it is on (that task's check is
 * aborted); base stays at the last merge that passed, state matches git, the lock is released; exit 130.
 */
export async function mergeAll(repo: Repo, env: NodeJS.ProcessEnv, out: (line: string) => void): Promise<number> {
  let session: Awaited<ReturnType<typeof openSession>> | null = null;
  const signals = deferSignals((signal) => {
    out(`received ${signal}: stopping the merge queue after the task it is on`);
    session?.fleet.stopLanding();
  });
  try {
    session = await openSession(repo, { overrides: {}, autoMerge: false, watch: false, env, requireModel: false });
    if (signals.signal !== null) return EXIT_INTERRUPTED;
    const queue = session.fleet
      .tasks()
      .filter((t) => t.status === 'verified')
      .map((t) => t.id);
    out(
      queue.length === 0
        ? 'nothing to merge: no task is verified'
        : `merge queue: ${queue.join(', ')} onto ${session.fleet.base}`,
    );
    const result = await session.fleet.mergeAll();
    for (const id of result.merged) out(`${id} merged`);
    for (const { id, reason } of result.sentBack) out(oneLine(`${id} sent back for a new attempt — ${reason}`));
    for (const { id, files } of result.conflicts)
      out(oneLine(`${id} conflict — ${files.join(', ') || 'base moved while the queue ran'}`));
    if (result.refused !== null) out(oneLine(`${result.refused.id} not merged — ${result.refused.reason}`));
    if (result.notReached.length > 0) out(`not reached: ${result.notReached.join(', ')}`);
    if (signals.signal !== null) return EXIT_INTERRUPTED;
    return result.sentBack.length > 0 || result.conflicts.length > 0 || result.refused !== null ? 1 : 0;
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
