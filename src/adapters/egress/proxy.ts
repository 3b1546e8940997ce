/**
 * The only way out of a CLI agent's sandbox: an HTTP proxy on the host, listening on a Unix socket that is
 * bind-mounted into the sandbox (whose network namespace has loopback only). It lets through exactly the
 * hosts on its allow-list — the agent's model endpoint and the `network:` hosts — by CONNECT tunnel or
 * plain forward; everything else is answered 403 and recorded.
 *
 * Invariants: a host is matched by name and port exactly as the client asked (no DNS games: `localhost`
 * and `127.0.0.1` are different entries); a connection carries requests for one target only (CONNECT) or
 * is checked request by request (forwarding), so a kept-alive connection cannot switch to another host.
 * Allowed traffic goes out through the person's own proxy when they have one ({@link upstreamFrom}): a company
 * network that only lets its proxy out works in the sandbox as it does in their shell.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { bypasses, proxyAuthorization, proxyEndpoint, tunnelThrough, type UpstreamProxies } from './upstream.js';

export interface AllowedHost {
  host: string;
  port: number;
}

export interface EgressProxy {
  /** the Unix socket the sandbox's forwarder connects to */
  socketPath: string;
  /** `host:port` of every refused attempt, in order */
  refused: string[];
  close(): Promise<void>;
}

/** `host`, `host:port` or a URL → the allowed endpoint (port 443 unless named, 80 for http://). */
export function parseHost(spec: string): AllowedHost {
  const trimmed = spec.trim().toLowerCase();
  if (/^[a-z][a-z0-9+.-]*:\/\//.test(trimmed)) {
    const url = new URL(trimmed);
    const port = url.port !== '' ? Number(url.port) : url.protocol === 'http:' ? 80 : 443;
    return { host: url.hostname.replace(/^\[|\]$/g, ''), port };
  }
  const m = /^([a-z0-9.-]+)(?::(\d{1,5}))?$/.exec(trimmed);
  if (!m) throw new Error(`not a host name: '${spec}'`);
  return { host: m[1]!, port: m[2] === undefined ? 443 : Number(m[2]) };
}

function allowed(list: readonly AllowedHost[], host: string, port: number): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return list.some((a) => a.host === h && a.port === port);
}

function splitTarget(target: string): { host: string; port: number } | null {
  const m = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(target);
  return m ? { host: m[1]!, port: Number(m[2]) } : null;
}

export interface EgressOptions {
  /** the person's proxies (HTTPS_PROXY, HTTP_PROXY, NO_PROXY); none: straight out */
  upstream?: UpstreamProxies;
}

export async function startEgressProxy(
  allow: readonly AllowedHost[],
  options: EgressOptions = {},
): Promise<EgressProxy> {
  // The person's proxy carries what goes out; a loopback host (a local model server) is never sent to it.
  const upstreamFor = (kind: 'https' | 'http', host: string, port: number): URL | null => {
    if (host === 'localhost' || (net.isIP(host) !== 0 && (host.startsWith('127.') || host === '::1'))) return null;
    const proxy = options.upstream?.[kind] ?? null;
    return proxy !== null && !bypasses(options.upstream?.noProxy ?? [], host, port) ? proxy : null;
  };
  const dir = await mkdtemp(path.join(os.tmpdir(), 'loopfleet-egress-'));
  const socketPath = path.join(dir, 'proxy.sock');
  const refused: string[] = [];
  const sockets = new Set<net.Socket>();

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      res.writeHead(400).end('loopfleet egress: absolute URL required\n');
      return;
    }
    const port = url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
    if (url.protocol !== 'http:' || !allowed(allow, url.hostname, port)) {
      refused.push(`${url.hostname}:${port}`);
      res
        .writeHead(403, { 'content-type': 'text/plain' })
        .end(`loopfleet egress: ${url.hostname}:${port} is not allowed\n`);
      return;
    }
    const via = upstreamFor('http', url.hostname, port);
    const auth = via === null ? null : proxyAuthorization(via);
    const upstream = httpRequest(
      via === null
        ? { host: url.hostname, port, method: req.method, path: `${url.pathname}${url.search}`, headers: req.headers }
        : {
            ...proxyEndpoint(via),
            method: req.method,
            path: url.href,
            headers: { ...req.headers, ...(auth === null ? {} : { 'proxy-authorization': auth }) },
          },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', (error) => {
      if (!res.headersSent) res.writeHead(502).end(`loopfleet egress: ${error.message}\n`);
      else res.destroy();
    });
    req.pipe(upstream);
  });

  server.on('connect', (req: IncomingMessage, client: net.Socket, head: Buffer) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    const target = splitTarget(req.url ?? '');
    if (target === null || !allowed(allow, target.host, target.port)) {
      refused.push(req.url ?? '?');
      client.end(
        `HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\n\r\nloopfleet egress: ${req.url ?? '?'} is not allowed\n`,
      );
      return;
    }
    const joined = (upstream: net.Socket) => {
      sockets.add(upstream);
      upstream.on('close', () => sockets.delete(upstream));
      client.on('close', () => upstream.destroy());
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    };
    const failed = (error: Error) => {
      if (client.writable) client.end(`HTTP/1.1 502 Bad Gateway\r\n\r\nloopfleet egress: ${error.message}\n`);
      else client.destroy();
    };
    const via = upstreamFor('https', target.host, target.port);
    if (via !== null) {
      tunnelThrough(via, `${target.host}:${target.port}`).then((up) => {
        up.on('error', () => client.destroy());
        if (client.destroyed) up.destroy();
        else joined(up);
      }, failed);
      return;
    }
    const upstream = net.connect(target.port, target.host, () => joined(upstream));
    sockets.add(upstream);
    upstream.on('error', (error) => (upstream.connecting ? failed(error) : client.destroy()));
  });
  server.on('connection', (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });

  return {
    socketPath,
    refused,
    async close() {
      for (const s of sockets) s.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
