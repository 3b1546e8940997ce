import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { renderReport } from '../core/report/morning-report.js';
import { runSandboxNotice } from './sandbox-line.js';
import { hostSandboxCause } from '../adapters/sandbox/userns-diagnosis.js';
import type { Fleet } from '../core/fleet/fleet.js';
import { printEvents } from './headless-printer.js';
import type { Repo } from './repo.js';
import { openSession, type SessionOptions } from './session.js';
import { REPORTS_DIR } from '../domain/layout.js';
import { summaryPayload, wanted } from '../core/fleet/notify-digest.js';
import { totalTokens } from '../domain/types.js';
import type { Session } from './session.js';

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_INTERRUPTED = 130;

/** 0: every task the run touched is verified or merged; 1: one failed or conflicts, or a fleet gate stopped the run. */
export function runExitCode(fleet: Fleet): number {
  // A run whose backlog went away ends unfinished: the queued tasks never started.
  if (fleet.stoppedBy !== null || fleet.backlogMissing || fleet.diskFull !== null || fleet.limit !== null)
    return EXIT_FAILED;
  for (const id of fleet.ranThisRun) {
    const status = fleet.task(id)?.status;
    if (status === 'failed' || status === 'conflict') return EXIT_FAILED;
  }
  return EXIT_OK;
}

export async function writeReport(repo: Repo, fleet: Fleet, startedAt: Date, exitCode: number): Promise<string> {
  const endedAt = new Date();
  const dir = join(repo.workDir, REPORTS_DIR);
  await mkdir(dir, { recursive: true });
  const path = join(dir, `${endedAt.toISOString().replace(/[:.]/g, '-')}.md`);
  const text = renderReport({
    repoRoot: repo.root,
    base: fleet.base,
    startedAt: startedAt.toISOString(),
    endedAt: endedAt.toISOString(),
    summary: fleet.summary(),
    tasks: fleet.tasks(),
    ran: fleet.ranThisRun,
    config: fleet.config,
    sandboxed: fleet.sandboxed,
    sandboxCause: fleet.sandboxed || fleet.config.sandbox === 'off' ? null : await hostSandboxCause(),
    exitCode,
  });
  await writeFile(path, text);
  return path;
}

/** The one `summary` payload a finished --overnight or --watch run sends to `notify:` (if notify_on wants it). */
export async function notifySummary(
  session: Session,
  fleet: Fleet,
  startedAt: Date,
  reportPath: string,
  exitCode: number,
): Promise<void> {
  const { notify, notifyOn } = fleet.config;
  if (notify === null) return;
  const s = fleet.summary();
  const payload = summaryPayload({
    counts: s.counts,
    tokens: totalTokens(s.totals.usage),
    costUsd: s.totals.costUsd,
    elapsedMs: Date.now() - startedAt.getTime(),
    reportPath,
    exitCode,
    ...(s.review === undefined ? {} : { review: s.review }),
  });
  if (wanted(payload, notifyOn ?? null)) await session.services.notify(notify, payload);
}

/**
 * Closes the session, then writes the report — also when closing failed (a transcript the machine's limits
 * kept from being flushed): the night is summed up either way, and the caller rethrows `closeError` after
 * it has said where the report is.
 */
export async function closeAndReport(
  repo: Repo,
  session: Session,
  startedAt: Date,
  interrupted: boolean,
): Promise<{ code: number; report: string; closeError: unknown }> {
  const closeError = await session.close().then(
    () => null,
    (error: unknown) => error,
  );
  const code = interrupted ? EXIT_INTERRUPTED : runExitCode(session.fleet);
  const report = await writeReport(repo, session.fleet, startedAt, code);
  return { code, report, closeError };
}

/** `loopfleet --overnight`: the whole backlog, headless, then a report. */
export async function overnight(repo: Repo, options: SessionOptions, out: (line: string) => void): Promise<number> {
  const startedAt = new Date();
  // A signal aborts the forge request in flight (a PR it was opening is found again by the next run).
  const forge = new AbortController();
  const session = await openSession(repo, { ...options, forgeSignal: forge.signal });
  const { fleet } = session;
  const unsubscribe = printEvents(fleet.events, out);
  let interrupted = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) return;
    interrupted = true;
    out(`received ${signal}: stopping; state is kept and the next start resumes`);
    forge.abort();
    void fleet.stop();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const notice = await runSandboxNotice(fleet.config.sandbox, fleet.sandboxed);
    if (notice !== null) out(`warning: ${notice}`);
    for (const warning of session.gitWarnings) out(`warning: ${warning}`);
    if (session.queueNotice !== null)
      out(`${session.queueNotice.level === 'warn' ? 'warning: ' : ''}${session.queueNotice.message}`);
    const counts = fleet.summary().counts;
    out(`loopfleet: ${counts.queued} queued task(s) on base ${fleet.base}, concurrency ${fleet.config.concurrency}`);
    // A pull request an earlier run failed to open, or was killed while opening, is opened or adopted first.
    if (fleet.landsByPr) await fleet.openPending();
    fleet.start();
    await fleet.whenIdle();
    const { code, report, closeError } = await closeAndReport(repo, session, startedAt, interrupted);
    const c = fleet.summary().counts;
    if (fleet.backlogMissing)
      out(
        `stopped early: ${fleet.backlogPath} was deleted or renamed during the run; ${c.queued} queued task(s) did not start`,
      );
    out(
      `done: ${c.verified} verified, ${c.merged} merged, ${c.failed} failed, ${c.conflict} conflict, ${c.queued} queued${c['awaiting-approval'] > 0 ? `, ${c['awaiting-approval']} awaiting approval` : ''}; report: ${report}`,
    );
    await notifySummary(session, fleet, startedAt, report, code);
    if (closeError !== null) throw closeError;
    return code;
  } finally {
    unsubscribe();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await session.close(); // idempotent: a no-op after the close above
  }
}
