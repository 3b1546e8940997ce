import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** HTTP plumbing of the fake Messages API. Invariant: nothing here lets a credential header through. */

const SECRET_HEADERS = new Set(['authorization', 'x-api-key', 'cookie', 'proxy-authorization']);
const MAX_BODY_BYTES = 32 * 1024 * 1024;

export function sendJson(res: ServerResponse, status: number, body: unknown, requestId: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': requestId });
  res.end(JSON.stringify(body));
}

export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new Error(`request body over ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

export function safeParse(raw: Buffer): unknown {
  if (raw.length === 0) return undefined;
  try {
    return JSON.parse(raw.toString('utf8')) as unknown;
  } catch {
    // An unparseable body is answered with a 400 by the caller; undefined marks it.
    return undefined;
  }
}

export function publicHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (SECRET_HEADERS.has(name) || value === undefined) continue;
    out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

export function authKind(req: IncomingMessage): 'bearer' | 'x-api-key' | null {
  if (typeof req.headers.authorization === 'string') return 'bearer';
  if (typeof req.headers['x-api-key'] === 'string') return 'x-api-key';
  return null;
}

/** Starts `server` on a free loopback port; resolves with the port once it listens. */
export async function listenLoopback(server: Server): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

/**
 * A small fake API on a free loopback port: `handle` answers each request; a failure of the fake itself is
 * answered 500 (or the connection cut when the answer had begun), never swallowed. `close` ends it at once.
 */
export async function serveLoopback(
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
): Promise<{ port: number; close: () => Promise<void> }> {
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(error));
      else res.destroy();
    });
  });
  const port = await listenLoopback(server);
  return {
    port,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
