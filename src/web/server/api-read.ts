import type { Context, Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { FleetHandle } from '../../core/fleet/handle.js';
import { jsonText } from '../../domain/sanitize.js';
import { clean } from './clean.js';
import type { EventHub } from './event-hub.js';
import { API_VERSION } from './guard.js';
import type { OutputTails } from './output-tails.js';
import { taskDetail, taskRow } from './task-json.js';
import type { Timeline } from './timeline.js';

/** A comment line on every open event stream this often, so proxies and browsers keep it open. */
export const HEARTBEAT_MS = 15_000;
/** A client that has this much of the stream unread is dropped (it reconnects and reads the list again). */
export const MAX_UNSENT_BYTES = 8 * 1024 * 1024;

export interface ReadSources {
  fleet: FleetHandle;
  readOnly: boolean;
  hub: EventHub;
  tails: OutputTails;
  timeline: Timeline;
  /**
   * the token, which `GET /api/session` hands the page for its actions' header: the page cannot read the
   * HttpOnly cookie, and no other origin can read this answer (no CORS)
   */
  token: string;
  /** the newest morning report, or null when none was written */
  latestReport(): Promise<{ name: string; markdown: string } | null>;
  /** called with each open stream's closer, so shutting down ends them all */
  track(close: () => void): () => void;
}

/** A JSON body, every string sanitised ({@link clean}) and the text escaped as `status --json`'s is. */
export function json(
  c: Context,
  value: unknown,
  status: 200 | 202 | 400 | 401 | 403 | 404 | 409 | 413 | 500 = 200,
): Response {
  return c.body(jsonText(clean(value)), status, { 'Content-Type': 'application/json; charset=utf-8' });
}

/** The words the CLI uses for an id the fleet does not know. */
export function unknownTask(fleet: FleetHandle, id: string): string {
  const known = fleet
    .tasks()
    .map((t) => t.id)
    .join(', ');
  return `no task ${id} in ${fleet.backlogPath} (tasks: ${known || 'none'})`;
}

export function readRoutes(app: Hono, s: ReadSources): void {
  const { fleet } = s;
  app.get('/api/session', (c) =>
    json(c, {
      apiVersion: API_VERSION,
      readOnly: s.readOnly,
      csrfToken: s.token,
      repo: fleet.repoRoot,
      base: fleet.base,
      backlogPath: fleet.backlogPath,
      sandboxed: fleet.sandboxed,
      concurrency: fleet.config.concurrency,
      autonomy: fleet.config.autonomy,
      gates: fleet.config.gates,
      fleetGates: fleet.config.fleetGates,
      summary: fleet.summary(),
    }),
  );
  app.get('/api/tasks', (c) =>
    json(
      c,
      fleet.tasks().map((t) => taskRow(t, fleet.waitingForReview(t.id))),
    ),
  );
  app.get('/api/tasks/:id', async (c) => {
    const id = c.req.param('id');
    const task = fleet.tasks().find((t) => t.id === id);
    if (task === undefined) return json(c, { error: unknownTask(fleet, id) }, 404);
    const diff = await fleet.diff(id);
    return json(c, taskDetail(task, diff, s.tails.of(id), fleet.waitingForReview(id)));
  });
  app.get('/api/report', async (c) => {
    const report = await s.latestReport();
    if (report === null)
      return json(
        c,
        { error: 'no morning report yet: one is written when a run (--overnight, --watch, serve) ends' },
        404,
      );
    return json(c, report);
  });
  app.get('/api/timeline', (c) => json(c, s.timeline.points()));
  app.get('/api/events', (c) =>
    streamSSE(c, async (stream) => {
      let unsent = 0;
      let done!: () => void;
      const ended = new Promise<void>((resolve) => (done = resolve));
      const send = (event: string, data: string) => {
        if (stream.closed || stream.aborted) return;
        const size = data.length + event.length + 16;
        if (unsent + size > MAX_UNSENT_BYTES) {
          done();
          return;
        }
        unsent += size;
        // A write fails only once the client is gone; the abort handler below ends the stream then.
        stream.writeSSE({ event, data }).then(
          () => (unsent -= size),
          () => done(),
        );
      };
      const unsubscribe = s.hub.subscribe(send);
      const untrack = s.track(done);
      stream.onAbort(done);
      const heartbeat = setInterval(() => {
        stream.write(': heartbeat\n\n').catch(() => done()); // a failed write means the client left: end it
      }, HEARTBEAT_MS);
      try {
        // Sent once the subscription is live: a client that reads the list after this misses nothing.
        send('ready', jsonText({ apiVersion: API_VERSION }));
        await ended;
      } finally {
        clearInterval(heartbeat);
        unsubscribe();
        untrack();
        await stream.close();
      }
    }),
  );
}
