import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBody, safeParse, serveLoopback } from '../../src/demo/http-util.js';

/** One request a fake forge received, as it arrived: tests assert what was sent (headers included). */
export interface RecordedRequest {
  method: string;
  /** the path without the query, URL-decoded */
  path: string;
  /** the path as sent, still encoded (GitLab's `projects/group%2Fname`) */
  rawPath: string;
  query: URLSearchParams;
  headers: Record<string, string>;
  body: unknown;
}

export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** a plain-text answer (a job's log) instead of JSON */
  text?: string;
  /** accept the request and never answer it (a forge that hangs) */
  hang?: boolean;
}

export type Handler = (req: RecordedRequest, params: Record<string, string>) => Reply | Promise<Reply>;

interface Route {
  method: string;
  pattern: RegExp;
  names: string[];
  handler: Handler;
}

/**
 * Routing, recording and listening shared by the fake forges. A route's `:name` matches one path segment
 * (URL-decoded); `:name*` matches the rest (GitLab's `projects/group%2Fsub%2Fname` arrives decoded as one).
 * A request no route knows is answered 404 and still recorded, so a test sees a wrong path.
 */
export class FakeHttp {
  readonly requests: RecordedRequest[] = [];
  /** bytes of every answer's body sent so far: what a client read from this fake */
  bytesSent = 0;
  #routes: Route[] = [];
  #before: ((req: RecordedRequest) => Reply | null)[] = [];
  #after: ((req: RecordedRequest, reply: Reply) => void)[] = [];
  #server: { port: number; close: () => Promise<void> } | null = null;

  route(method: string, path: string, handler: Handler): void {
    const names: string[] = [];
    const source = path
      .split('/')
      .map((segment) => {
        if (!segment.startsWith(':')) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        const rest = segment.endsWith('*');
        names.push(segment.slice(1, rest ? -1 : undefined));
        return rest ? '(.+)' : '([^/]+)';
      })
      .join('/');
    this.#routes.push({ method, pattern: new RegExp(`^${source}$`), names, handler });
  }

  /** A hook that may answer a request before its route does (rate limits, outages): null lets it through. */
  before(hook: (req: RecordedRequest) => Reply | null): void {
    this.#before.push(hook);
  }

  /** A hook that may add headers to every answer (rate-limit headers). */
  after(hook: (req: RecordedRequest, reply: Reply) => void): void {
    this.#after.push(hook);
  }

  async start(): Promise<number> {
    this.#server = await serveLoopback((req, res) => this.#handle(req, res));
    return this.#server.port;
  }

  async close(): Promise<void> {
    await this.#server?.close();
    this.#server = null;
  }

  /** Every header value and body any request carried, as one string: for asserting a token went nowhere else. */
  everythingSentBesides(headerName: string): string {
    return this.requests
      .map((r) => {
        const headers = Object.entries(r.headers).filter(([name]) => name !== headerName.toLowerCase());
        return `${r.method} ${r.path}?${r.query.toString()} ${JSON.stringify(headers)} ${JSON.stringify(r.body ?? null)}`;
      })
      .join('\n');
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers))
      if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
    const recorded: RecordedRequest = {
      method: req.method ?? 'GET',
      path: decodeURIComponent(url.pathname),
      rawPath: url.pathname,
      query: url.searchParams,
      headers,
      body: safeParse(await readBody(req)),
    };
    this.requests.push(recorded);
    const reply = (await this.#answer(recorded)) ?? { status: 404, body: { message: 'Not Found' } };
    for (const hook of this.#after) hook(recorded, reply);
    if (reply.hang === true) return;
    if (reply.text !== undefined) {
      this.bytesSent += Buffer.byteLength(reply.text);
      res.writeHead(reply.status, { 'content-type': 'text/plain; charset=utf-8', ...reply.headers });
      res.end(reply.text);
      return;
    }
    const body = reply.body === undefined ? '' : JSON.stringify(reply.body);
    this.bytesSent += Buffer.byteLength(body);
    res.writeHead(reply.status, { 'content-type': 'application/json; charset=utf-8', ...reply.headers });
    res.end(body);
  }

  async #answer(req: RecordedRequest): Promise<Reply | null> {
    for (const hook of this.#before) {
      const early = hook(req);
      if (early !== null) return early;
    }
    for (const route of this.#routes) {
      if (route.method !== req.method) continue;
      const match = route.pattern.exec(req.path);
      if (match === null) continue;
      const params: Record<string, string> = {};
      route.names.forEach((name, i) => {
        params[name] = match[i + 1] ?? '';
      });
      return route.handler(req, params);
    }
    return null;
  }
}

/**
 * `items` paged the way both forges page (`page`, `per_page`), with a `link` header as GitHub and GitLab send
 * it on `origin`: `next` and `last` while there are later pages, `prev` and `first` after the first.
 */
export function paged<T>(req: RecordedRequest, items: readonly T[], origin: string): Reply {
  const perPage = Math.max(1, Number(req.query.get('per_page') ?? '30'));
  const page = Math.max(1, Number(req.query.get('page') ?? '1'));
  const last = Math.max(1, Math.ceil(items.length / perPage));
  const slice = items.slice((page - 1) * perPage, page * perPage);
  const to = (n: number, rel: string): string => {
    const query = new URLSearchParams(req.query);
    query.set('page', String(n));
    return `<${origin}${req.rawPath}?${query.toString()}>; rel="${rel}"`;
  };
  const links: string[] = [];
  if (page < last) links.push(to(page + 1, 'next'), to(last, 'last'));
  if (page > 1) links.push(to(page - 1, 'prev'), to(1, 'first'));
  return { status: 200, body: slice, headers: links.length === 0 ? {} : { link: links.join(', ') } };
}

/**
 * Canned answers for the requests to come (a rate limit, an outage): each entry answers the next `count`
 * requests, then the one queued after it does; with none queued, requests go through.
 */
export class Upcoming<T> {
  readonly #queue: Array<{ count: number; entry: T }> = [];

  push(count: number, entry: T): void {
    this.#queue.push({ count, entry });
  }

  /** The entry this request takes (counting it), or undefined when none is queued. */
  take(): T | undefined {
    const head = this.#queue[0];
    if (head === undefined) return undefined;
    head.count -= 1;
    if (head.count <= 0) this.#queue.shift();
    return head.entry;
  }
}
