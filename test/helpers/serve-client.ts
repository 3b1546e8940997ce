/**
 * A client of `loopfleet serve` over real HTTP on loopback: the built CLI started as a process, plain
 * `node:http` requests (so a test sets any header a browser would, Host and Origin included), and an
 * event-stream reader that parses Server-Sent Events as a browser's EventSource does.
 */
import { request, type IncomingHttpHeaders } from 'node:http';
import { execa, type ResultPromise } from 'execa';
import { CLI } from './paths.js';
import { eventually } from './wait.js';

export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  json: <T = unknown>() => T;
}

export interface Served {
  process: ResultPromise<{ reject: false; all: true }>;
  /** everything the process printed so far */
  output: () => string;
  url: string;
  origin: string;
  port: number;
  token: string;
}

/** Starts `loopfleet serve --port 0 …` in `cwd` and resolves once it printed its URL. */
export async function startServe(cwd: string, args: string[], env: Record<string, string>): Promise<Served> {
  const child = execa(process.execPath, [CLI, 'serve', '--port', '0', ...args], {
    cwd,
    reject: false,
    all: true,
    env: { NO_COLOR: '1', ...env },
    extendEnv: true,
  });
  let out = '';
  child.all.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  const url = await Promise.race([
    eventually(() => /^open (https?:\/\/\S+)$/m.exec(out)?.[1], 50),
    child.then((r) => {
      throw new Error(`serve ended before it printed its URL (exit ${r.exitCode}):\n${r.all}`);
    }),
  ]);
  const parsed = new URL(url);
  // Behind a proxy (LOOPFLEET_SERVE_ORIGIN) the URL is the proxy's; the listener is named on a line of its own.
  const listening = /^listening on (http:\/\/\S+), served at /m.exec(out)?.[1];
  const local = new URL(listening ?? url);
  return {
    process: child,
    output: () => out,
    url,
    origin: local.origin,
    port: Number(local.port),
    token: parsed.searchParams.get('token') ?? '',
  };
}

/** One request to the server on 127.0.0.1:`port`; `headers` go as they are (Host included). */
export function call(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        // A connection of its own: one the server ended (a refused body) is never reused by the next call.
        agent: false,
        headers: {
          host: `127.0.0.1:${port}`,
          ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }),
          ...headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: <T>() => JSON.parse(text) as T }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

export interface SseMessage {
  event: string;
  data: string;
}

export interface EventStream {
  status: number;
  headers: IncomingHttpHeaders;
  messages: SseMessage[];
  /** the raw text received, comments included */
  raw: () => string;
  /** resolves with the first message (already received or to come) that `match` accepts */
  next(match: (m: SseMessage) => boolean): Promise<SseMessage>;
  /** resolves when the server ended the stream */
  ended: Promise<void>;
  close(): void;
}

/** Opens `GET /api/events` and parses its messages as they come. */
export function openEvents(port: number, headers: Record<string, string>): Promise<EventStream> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'GET',
        path: '/api/events',
        headers: { host: `127.0.0.1:${port}`, accept: 'text/event-stream', ...headers },
      },
      (res) => {
        const messages: SseMessage[] = [];
        const waiters: Array<{ match: (m: SseMessage) => boolean; done: (m: SseMessage) => void }> = [];
        let raw = '';
        let buffer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          raw += chunk;
          buffer += chunk;
          let cut = buffer.indexOf('\n\n');
          while (cut !== -1) {
            const block = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            cut = buffer.indexOf('\n\n');
            let event = 'message';
            const data: string[] = [];
            for (const line of block.split('\n')) {
              if (line.startsWith('event:')) event = line.slice(6).trim();
              else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
            }
            if (data.length === 0) continue; // a comment (heartbeat)
            const message = { event, data: data.join('\n') };
            messages.push(message);
            for (const w of [...waiters])
              if (w.match(message)) {
                waiters.splice(waiters.indexOf(w), 1);
                w.done(message);
              }
          }
        });
        const ended = new Promise<void>((done) => res.on('close', () => done()));
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          messages,
          raw: () => raw,
          next: (match) => {
            const seen = messages.find(match);
            if (seen !== undefined) return Promise.resolve(seen);
            return new Promise((done) => waiters.push({ match, done }));
          },
          ended,
          close: () => req.destroy(),
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}
