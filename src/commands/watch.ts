import { runSandboxNotice } from './sandbox-line.js';
import type { DiscoverSource } from '../domain/types.js';
import { printEvents } from './headless-printer.js';
import type { Repo } from './repo.js';
import { openSession, type SessionOptions } from './session.js';
import { closeAndReport, notifySummary } from './overnight.js';
import { untilTime } from './until.js';
import { MAX_TIMER_MS } from '../domain/layout.js';
import type { Fleet } from '../core/fleet/fleet.js';
import { syncLines } from './sync.js';

export interface WatchOptions extends SessionOptions {
  /** `--until HH:MM`, local time; null: until a signal or a fleet gate */
  until: string | null;
}

/**
 * `loopfleet --watch`: the fleet stays up after it goes idle. Recurring tasks run when due, BACKLOG.md is
 * re-read as it changes, and `discover:` in the front matter runs discover on its own cadence. It ends on
 * SIGINT/SIGTERM (130), a fleet gate (1) or `--until` (the exit code of --overnight), with the same report.
 */
export async function watch(repo: Repo, options: WatchOptions, out: (line: string) => void): Promise<number> {
  const startedAt = new Date();
  // A signal aborts the forge request in flight: a forge that never answers cannot hold the stop up.
  const forge = new AbortController();
  const session = await openSession(repo, { ...options, watch: true, forgeSignal: forge.signal });
  const { fleet } = session;
  const unsubscribe = printEvents(fleet.events, out);
  let interrupted = false;
  let end!: (why: string) => void;
  const ended = new Promise<string>((resolve) => (end = resolve));
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) return;
    interrupted = true;
    out(`received ${signal}: stopping; state is kept and the next start resumes`);
    forge.abort();
    end(signal);
  };
  const onGate = (gate: { scope: string }) => {
    if (gate.scope === 'fleet') end('a fleet gate');
  };
  fleet.events.on('gate', onGate);
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const timers: NodeJS.Timeout[] = [];
  // Holds the process open while the fleet waits; every other timer of the fleet is unref'd.
  timers.push(setInterval(() => undefined, 60_000));
  if (options.until !== null) {
    const at = untilTime(options.until, startedAt);
    timers.push(setTimeout(() => end(`--until ${options.until}`), at.getTime() - startedAt.getTime()));
    out(`watching until ${at.toString()}`);
  }
  const discovering = discoverLoop(repo, options, () => fleet.config.discover ?? null, out, ended);
  const syncing = syncLoop(fleet, out, ended);
  try {
    const notice = await runSandboxNotice(fleet.config.sandbox, fleet.sandboxed);
    if (notice !== null) out(`warning: ${notice}`);
    for (const warning of session.gitWarnings) out(`warning: ${warning}`);
    if (session.queueNotice !== null)
      out(`${session.queueNotice.level === 'warn' ? 'warning: ' : ''}${session.queueNotice.message}`);
    out(
      `loopfleet --watch: ${fleet.summary().counts.queued} queued task(s) on base ${fleet.base}, concurrency ${fleet.config.concurrency}`,
    );
    fleet.start();
    const why = await ended;
    out(`stopping: ${why}`);
    await discovering;
    await syncing;
    const { code, report, closeError } = await closeAndReport(repo, session, startedAt, interrupted);
    const c = fleet.summary().counts;
    out(
      `done: ${c.verified} verified, ${c.merged} merged, ${c.failed} failed, ${c.conflict} conflict, ${c.queued} queued; report: ${report}`,
    );
    await notifySummary(session, fleet, startedAt, report, code);
    if (closeError !== null) throw closeError;
    return code;
  } finally {
    for (const t of timers) clearTimeout(t);
    end('done');
    fleet.events.off('gate', onGate);
    unsubscribe();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await session.close(); // idempotent
  }
}

/**
 * Reads every open pull request (`land: pr`) now and then every `pr.sync` (read afresh: BACKLOG.md may
 * change it) until `ended` settles; a pass that did something prints what. A failed pass is reported and
 * tried again next time. Nothing is read while no task lands by pull request.
 */
async function syncLoop(fleet: Fleet, out: (line: string) => void, ended: Promise<string>): Promise<void> {
  let stopped = false;
  void ended.then(() => (stopped = true));
  while (!stopped) {
    if (fleet.landsByPr) {
      try {
        for (const line of syncLines(await fleet.sync())) out(`sync: ${line}`);
      } catch (error) {
        out(`sync failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    const waitMs = Math.min(fleet.config.pr?.syncEveryMs ?? 120_000, MAX_TIMER_MS);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([ended, new Promise((r) => (timer = setTimeout(r, waitMs)))]);
    clearTimeout(timer);
  }
}

/**
 * Runs `loopfleet discover` now and then every `discover.every` (read afresh each time: BACKLOG.md may
 * change it) until `ended` settles. A discover that fails is reported and tried again next time.
 */
async function discoverLoop(
  repo: Repo,
  options: WatchOptions,
  setting: () => { everyMs: number; only: DiscoverSource[] } | null,
  out: (line: string) => void,
  ended: Promise<string>,
): Promise<void> {
  let stopped = false;
  void ended.then(() => (stopped = true));
  const { discover } = await import('./discover.js');
  while (!stopped) {
    const s = setting();
    if (s !== null) {
      try {
        await discover(
          repo,
          { dryRun: false, limit: null, only: new Set(s.only), githubLabel: 'loopfleet', env: options.env },
          (line) => out(`discover: ${line}`),
        );
      } catch (error) {
        out(`discover failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    // With no setting, look again in a minute: a person may add one to the front matter.
    const waitMs = Math.min(s?.everyMs ?? 60_000, MAX_TIMER_MS);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([ended, new Promise((r) => (timer = setTimeout(r, waitMs)))]);
    clearTimeout(timer);
  }
}
