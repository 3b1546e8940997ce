import { newestReport } from './newest-report.js';
import { WEBHOOK_SECRET_ENV } from '../core/tracker/webhook.js';
import { PAGE_ASSETS } from '../web/page/assets.js';
import { openListener, type WebServer } from '../web/server/app.js';
import { isLoopback } from '../web/server/guard.js';
import { publicOrigin, serveToken } from '../web/server/token.js';
import { printEvents } from './headless-printer.js';
import { closeAndReport, notifySummary } from './overnight.js';
import type { Repo } from './repo.js';
import { runSandboxNotice } from './sandbox-line.js';
import { openSession, type SessionOptions } from './session.js';

export interface ServeOptions extends SessionOptions {
  port: number;
  host: string;
  readOnly: boolean;
}

export const DEFAULT_PORT = 7420;
export const DEFAULT_HOST = '127.0.0.1';

/** The newest morning report ({@link newestReport}) as the API answers it. */
export async function latestReport(repo: Repo): Promise<{ name: string; markdown: string } | null> {
  const report = await newestReport(repo);
  return report === null ? null : { name: report.name, markdown: report.markdown };
}

/** What a bind beyond loopback risks, said at start; null on loopback. */
export function exposureWarning(host: string, readOnly: boolean): string | null {
  if (isLoopback(host)) return null;
  const where = `listening on ${host}, beyond this machine`;
  const clear = 'the token and every page cross the network in clear text (no TLS): put it behind a TLS reverse proxy';
  if (readOnly) return `${where}: anyone who gets the token can read the fleet, its diffs and its output; ${clear}`;
  return `${where}: anyone who gets the token can merge, discard, retry and approve; ${clear}, or add --read-only`;
}

/**
 * `loopfleet serve`: the fleet as the interactive view runs it (the same session, lock and engine), with
 * the web page and its API over it instead of Ink. The process is the fleet's one writer; the page's
 * actions are calls of the same {@link FleetCommands}. It runs until SIGINT or SIGTERM, then closes the
 * event streams and the listener, stops the fleet keeping state, writes the morning report, exits 130.
 */
export async function serve(repo: Repo, options: ServeOptions, out: (line: string) => void): Promise<number> {
  const startedAt = new Date();
  // Before anything opens: a token that is too short is bad usage (exit 2), nothing written.
  const token = serveToken(options.env);
  const origin = publicOrigin(options.env);
  // Bound before the session opens: a port in use is bad usage too, and nothing has been written yet.
  const listener = await openListener(options.host, options.port);
  const forge = new AbortController();
  const session = await openSession(repo, { ...options, watch: true, forgeSignal: forge.signal }).catch(
    async (error: unknown) => {
      await listener.close();
      throw error;
    },
  );
  const { fleet } = session;
  let end!: (why: string) => void;
  const ended = new Promise<string>((resolve) => (end = resolve));
  let interrupted = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) return;
    interrupted = true;
    out(`received ${signal}: stopping; state is kept and the next start resumes`);
    forge.abort();
    end(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let server: WebServer | null = null;
  let unsubscribe = () => {};
  try {
    server = listener.serve({
      fleet,
      token,
      readOnly: options.readOnly,
      publicOrigin: origin,
      assets: PAGE_ASSETS,
      latestReport: () => latestReport(repo),
      webhooks:
        session.tracker === null
          ? null
          : {
              secret: options.env[WEBHOOK_SECRET_ENV],
              hear: (change) => session.tracker!.hear(change),
              refused: (forge, status, reason) =>
                fleet.events.emit('log', {
                  level: 'warn',
                  message: `webhook from ${forge} refused (${status}): ${reason}`,
                }),
            },
      onError: (error) =>
        fleet.events.emit('log', { level: 'error', message: `serve: ${error.stack ?? error.message}` }),
    });
    unsubscribe = printEvents(fleet.events, out);
    const notice = await runSandboxNotice(fleet.config.sandbox, fleet.sandboxed);
    if (notice !== null) out(`warning: ${notice}`);
    for (const warning of session.gitWarnings) out(`warning: ${warning}`);
    if (session.queueNotice !== null)
      out(`${session.queueNotice.level === 'warn' ? 'warning: ' : ''}${session.queueNotice.message}`);
    const exposure = exposureWarning(options.host, options.readOnly);
    if (exposure !== null) out(`warning: ${exposure}`);
    out(
      `loopfleet serve: ${fleet.summary().counts.queued} queued task(s) on base ${fleet.base}, concurrency ${fleet.config.concurrency}${options.readOnly ? ', read-only' : ''}`,
    );
    // The URL is printed once: behind a proxy it is the proxy's, and the listener is named without the token.
    if (origin !== null) out(`listening on ${server.origin}, served at ${origin.origin}`);
    out(`open ${origin === null ? server.url : `${origin.origin}/?token=${token}`}`);
    fleet.start();
    // As the interactive view: a pull request an earlier run left unopened is opened or adopted behind it.
    if (fleet.landsByPr)
      void fleet
        .openPending()
        .catch((error: Error) =>
          fleet.events.emit('log', { level: 'warn', message: `pull requests not opened: ${error.message}` }),
        );
    const why = await ended;
    out(`stopping: ${why}`);
    await server.close();
    const { code, report, closeError } = await closeAndReport(repo, session, startedAt, interrupted);
    const c = fleet.summary().counts;
    out(
      `done: ${c.verified} verified, ${c.merged} merged, ${c.failed} failed, ${c.conflict} conflict, ${c.queued} queued; report: ${report}`,
    );
    await notifySummary(session, fleet, startedAt, report, code);
    if (closeError !== null) throw closeError;
    return code;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    unsubscribe();
    await (server ?? listener).close();
    await session.close(); // idempotent: a no-op after closeAndReport
  }
}
