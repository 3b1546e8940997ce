import { UsageError } from '../domain/errors.js';
import { oneLine } from '../domain/sanitize.js';
import type { SyncResult } from '../core/land/pr/pull-requests.js';
import { deferSignals } from './deferred-signals.js';
import { EXIT_INTERRUPTED } from './overnight.js';
import type { Repo } from './repo.js';
import { openSession, type SessionOptions } from './session.js';

/** The lines `loopfleet sync` (and each `--watch` pass that did something) prints for one pass. */
export function syncLines(result: SyncResult): string[] {
  const lines: string[] = [];
  for (const id of result.merged)
    lines.push(`${id} merged${result.landed === id ? ' (merged by loopfleet)' : ' on the forge'}`);
  for (const id of result.closed) lines.push(`${id} discarded: its pull request was closed unmerged`);
  for (const { id, reason } of result.mergedBehind) lines.push(oneLine(`${id} still verified — ${reason}`));
  for (const id of result.published) lines.push(`${id} pull request opened or found again (it had none open)`);
  for (const { id, reason } of result.sentBack) lines.push(oneLine(`${id} queued for a new attempt — ${reason}`));
  for (const id of result.rebased) lines.push(`${id} rebased onto ${result.onto ?? 'base'}, checked again and pushed`);
  for (const { id, message } of result.errors) lines.push(oneLine(`${id} not synced — ${message}`));
  if (result.rateLimited !== null) lines.push(oneLine(`stopped early: ${result.rateLimited}`));
  return lines;
}

/**
 * `loopfleet sync`: one pass over every open pull request (see {@link syncPulls}). Tasks it sends back
 * for a new attempt run at the next `loopfleet`, `--overnight` or `--watch`. A signal aborts the forge
 * request in flight (a forge that never answers holds nothing up) and ends the pass after the task it is on
 * (state matches the forge and git), then exits 130.
 */
export async function sync(
  repo: Repo,
  env: NodeJS.ProcessEnv,
  out: (line: string) => void,
  services?: SessionOptions['services'],
): Promise<number> {
  const abort = new AbortController();
  const signals = deferSignals((signal) => {
    out(`received ${signal}: finishing the sync first`);
    abort.abort();
  });
  let session: Awaited<ReturnType<typeof openSession>> | null = null;
  try {
    session = await openSession(repo, {
      overrides: {},
      autoMerge: false,
      watch: false,
      env,
      requireModel: false,
      needForge: true,
      forgeSignal: abort.signal,
      ...(services === undefined ? {} : { services }),
    });
    const { fleet } = session;
    if (!fleet.landsByPr)
      throw new UsageError(
        `no task in ${repo.backlogPath} lands by pull request: write \`land: pr\` in the front matter (or on a task)`,
      );
    const open = fleet.tasks().filter((t) => t.pr?.state === 'open');
    out(
      open.length === 0
        ? 'no open pull request to sync'
        : `syncing ${open.length} open pull request(s): ${open.map((t) => `${t.id} #${t.pr!.number}`).join(', ')}`,
    );
    const result = await fleet.sync();
    for (const line of syncLines(result)) out(line);
    if (signals.signal !== null) return EXIT_INTERRUPTED;
    return result.errors.length > 0 || result.rateLimited !== null ? 1 : 0;
  } finally {
    try {
      await session?.close();
    } finally {
      signals.release();
    }
  }
}
