import { serve, type ServerType } from '@hono/node-server';
import { Hono } from 'hono';
import type { AddressInfo } from 'node:net';
import type { FleetHandle } from '../../core/fleet/handle.js';
import { UsageError } from '../../domain/errors.js';
import { actionRoutes, readOnlyRoutes } from './api-actions.js';
import { json, readRoutes } from './api-read.js';
import { EventHub } from './event-hub.js';
import { allowedHosts, authCheck, hostCheck, isWildcard, securityHeaders, type GuardOptions } from './guard.js';
import { bodyLimit } from 'hono/body-limit';
import { hookRoutes, type WebhookReceiver } from './hooks.js';
import { OutputTails } from './output-tails.js';
import { Timeline } from './timeline.js';

/** The largest request body accepted (an action's JSON; an edited plan is the longest). */
export const MAX_BODY_BYTES = 1024 * 1024;

/** Path → content type and body: the page (`/`) and its files (`/assets/…`), served as they are. */
export type PageAssets = Record<string, { type: string; body: string }>;

export interface WebServerOptions {
  fleet: FleetHandle;
  token: string;
  readOnly: boolean;
  /** the address to bind: 127.0.0.1 by default; 0.0.0.0 or :: for every interface */
  host: string;
  /** 0: any free port */
  port: number;
  assets: PageAssets;
  latestReport(): Promise<{ name: string; markdown: string } | null>;
  /** what a request that failed inside the server is logged as (the client gets 500 and no detail) */
  onError(error: Error): void;
  /** how long the event hub gathers events (default {@link FLUSH_MS}) */
  flushMs?: number;
  /** the page's origin behind a reverse proxy (`LOOPFLEET_SERVE_ORIGIN`), or null */
  publicOrigin?: URL | null;
  /** the tracker's webhooks (`POST /hooks/github`, `/hooks/gitlab`); absent or null: they answer 404 */
  webhooks?: WebhookReceiver | null;
}

export interface WebServer {
  readonly port: number;
  /** `http://HOST:PORT/?token=…`: the one URL that opens the page */
  readonly url: string;
  /** the URL without the token, for a log line */
  readonly origin: string;
  /** ends the event streams, then stops listening; the fleet is the caller's to close */
  close(): Promise<void>;
}

/**
 * The Hono application over a fleet: the guards (headers, Host, token, CSRF), the page, the read API, the
 * event stream and — unless read-only — the actions. Exposed apart from {@link startWebServer} so the
 * routes can be read as one table.
 */
export function webApp(
  options: Omit<WebServerOptions, 'port' | 'host'>,
  guard: GuardOptions,
  parts: { hub: EventHub; tails: OutputTails; timeline: Timeline; track: (close: () => void) => () => void },
): Hono {
  const app = new Hono();
  // Before the token guard: a forge signs its deliveries and cannot carry the page's token.
  hookRoutes(app, options.webhooks ?? null, [securityHeaders, hostCheck(guard)]);
  app.use('*', securityHeaders, hostCheck(guard), authCheck(guard));
  // Read only after the token was checked; the longest body an action takes is an edited plan.
  app.use(
    '*',
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: (c) => json(c, { error: `a body is at most ${MAX_BODY_BYTES} bytes` }, 413),
    }),
  );
  if (options.readOnly) readOnlyRoutes(app);
  readRoutes(app, {
    fleet: options.fleet,
    readOnly: options.readOnly,
    token: options.token,
    latestReport: options.latestReport,
    ...parts,
  });
  if (!options.readOnly) actionRoutes(app, options.fleet);
  app.get('*', (c) => {
    const asset = options.assets[c.req.path];
    if (asset === undefined) return json(c, { error: `nothing at ${c.req.path}` }, 404);
    return c.body(asset.body, 200, { 'Content-Type': asset.type });
  });
  app.notFound((c) => json(c, { error: `nothing at ${c.req.method} ${c.req.path}` }, 404));
  app.onError((error, c) => {
    options.onError(error);
    return json(c, { error: 'internal error: the server logged it' }, 500);
  });
  return app;
}

/** URL form of a host: an IPv6 address in brackets. */
function urlHost(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/** A socket bound and listening, answering 503 until {@link Listener.serve} hands it a fleet. */
export interface Listener {
  readonly host: string;
  readonly port: number;
  serve(options: Omit<WebServerOptions, 'host' | 'port'>): WebServer;
  close(): Promise<void>;
}

const STARTING = JSON.stringify({ error: 'loopfleet serve is starting: try again in a moment' });

/**
 * Binds `host:port` first, before any fleet opens, so a port in use or an address not of this machine is bad
 * usage (exit 2) with nothing written; the fleet is attached once its session is open.
 */
export async function openListener(host: string, port: number): Promise<Listener> {
  let handler: ((request: Request) => Response | Promise<Response>) | null = null;
  const fetch = (request: Request) =>
    handler === null
      ? new Response(STARTING, {
          status: 503,
          headers: { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' },
        })
      : handler(request);
  const server = await new Promise<ServerType>((resolve, reject) => {
    const s = serve({ fetch, port, hostname: host }, () => resolve(s));
    s.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new UsageError(`--port ${port}: the port is in use on ${host}; choose another (0: any free port)`)
          : error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND' || error.code === 'EAI_AGAIN'
            ? new UsageError(`--host ${host}: not an address of this machine (${error.code})`)
            : error,
      ),
    );
  });
  const bound = (server.address() as AddressInfo).port;
  let closing: Promise<void> | null = null;
  const close = () =>
    (closing ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      // Keep-alive connections would hold close() open until they time out.
      if ('closeAllConnections' in server) server.closeAllConnections();
    }));
  return {
    host,
    port: bound,
    close,
    serve: (options) => {
      const hosts = new Set(allowedHosts(host, bound));
      if (options.publicOrigin != null) hosts.add(options.publicOrigin.host.toLowerCase());
      const guard: GuardOptions = {
        token: options.token,
        port: () => bound,
        hosts: () => hosts,
        publicOrigin: options.publicOrigin?.origin.toLowerCase() ?? null,
      };
      const hub = new EventHub(options.fleet.events, options.flushMs, (id) => options.fleet.waitingForReview(id));
      const tails = new OutputTails(options.fleet.events);
      const timeline = new Timeline(options.fleet.events, () => options.fleet.summary());
      const streams = new Set<() => void>();
      const track = (end: () => void) => {
        streams.add(end);
        return () => streams.delete(end);
      };
      const app = webApp(options, guard, { hub, tails, timeline, track });
      handler = (request) => app.fetch(request);
      const shown = urlHost(isWildcard(host) ? '127.0.0.1' : host);
      const origin = `http://${shown}:${bound}`;
      let stopping: Promise<void> | null = null;
      return {
        port: bound,
        origin,
        url: `${origin}/?token=${options.token}`,
        close: () =>
          (stopping ??= (async () => {
            for (const end of [...streams]) end();
            hub.close();
            tails.close();
            timeline.close();
            await close();
          })()),
      };
    },
  };
}

/** Binds and serves at once: {@link openListener}, then {@link Listener.serve}. */
export async function startWebServer(options: WebServerOptions): Promise<WebServer> {
  const listener = await openListener(options.host, options.port);
  return listener.serve(options);
}
