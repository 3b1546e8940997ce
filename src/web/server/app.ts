import { serve, type ServerType } from '@hono/node-server';
import { Hono } from 'hono';
import type { AddressInfo } from 'node:net';
import type { FleetHandle } from '../../core/fleet/handle.js';
import { UsageError } from '../../domain/errors.js';
import { actionRoutes, readOnlyRoutes } from './api-actions.js';
import { json, readRoutes } from './api-read.js';
import { EventHub } from './event-hub.js';
import { allowedHosts, authCheck, hostCheck, securityHeaders, type GuardOptions } from './guard.js';
import { OutputTails } from './output-tails.js';
import { Timeline } from './timeline.js';

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
  app.use('*', securityHeaders, hostCheck(guard), authCheck(guard));
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

/** Starts listening; resolves once it does, with the URL that opens the page. */
export async function startWebServer(options: WebServerOptions): Promise<WebServer> {
  let port = options.port;
  let hosts: ReadonlySet<string> = new Set();
  const guard: GuardOptions = { token: options.token, port: () => port, hosts: () => hosts };
  const hub = new EventHub(options.fleet.events, options.flushMs);
  const tails = new OutputTails(options.fleet.events);
  const timeline = new Timeline(options.fleet.events, () => options.fleet.summary());
  const streams = new Set<() => void>();
  const track = (close: () => void) => {
    streams.add(close);
    return () => streams.delete(close);
  };
  const app = webApp(options, guard, { hub, tails, timeline, track });
  const closeParts = () => {
    hub.close();
    tails.close();
    timeline.close();
  };
  let server: ServerType;
  try {
    server = await new Promise<ServerType>((resolve, reject) => {
      const s = serve({ fetch: app.fetch, port: options.port, hostname: options.host }, () => resolve(s));
      s.once('error', (error: NodeJS.ErrnoException) =>
        reject(
          error.code === 'EADDRINUSE'
            ? new UsageError(
                `--port ${options.port}: the port is in use on ${options.host}; choose another (0: any free port)`,
              )
            : error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND'
              ? new UsageError(`--host ${options.host}: not an address of this machine (${error.code})`)
              : error,
        ),
      );
    });
  } catch (error) {
    closeParts();
    throw error;
  }
  port = (server.address() as AddressInfo).port;
  hosts = allowedHosts(options.host, port);
  const shown = urlHost(options.host === '0.0.0.0' || options.host === '::' ? '127.0.0.1' : options.host);
  const origin = `http://${shown}:${port}`;
  let closing: Promise<void> | null = null;
  return {
    port,
    origin,
    url: `${origin}/?token=${options.token}`,
    close: () =>
      (closing ??= (async () => {
        for (const end of [...streams]) end();
        closeParts();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          // Keep-alive connections would hold close() open until they time out.
          if ('closeAllConnections' in server) server.closeAllConnections();
        });
      })()),
  };
}
