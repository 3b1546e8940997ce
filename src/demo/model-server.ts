import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { blocksOf, CacheSim, type InputUsage } from './cache-sim.js';
import type { Fault, RequestBody, Script, ScriptTurn } from './script-types.js';
import { toScriptRequest } from './script-request.js';
import { buildReply, errorJson, formatSse, messageJson, streamEvents, type SseEvent } from './sse.js';
import { authKind, listenLoopback, publicHeaders, readBody, safeParse, sendJson } from './http-util.js';
import { betasOf, validateBody, validateHeaders, type ApiErrorSpec } from './validate.js';

export { roleOf, roleMarker, taskMarker, attemptMarker } from '../core/roles/marker.js';
export type { Fault, Script, ScriptRequest, ScriptTurn, ToolUseScript } from './script-types.js';

/**
 * A loopback fake of the Messages API (`POST /v1/messages`, streaming and not), scripted per request.
 * It validates what the real API rejects, reports deterministic usage with simulated prompt caching, can
 * inject faults, and records every request (without credentials) for tests to assert on.
 */

export interface ModelServerOptions {
  script: Script;
  /** keys the server accepts; null or absent → any non-empty key */
  apiKeys?: readonly string[] | null;
  /** model ids the server knows; null or absent → any */
  models?: readonly string[] | null;
  /** characters per streamed text chunk (default 24) */
  chunkChars?: number;
  minCacheableTokens?: number;
  now?: () => number;
}

/** Usage as the client could see it: for a cut stream, only what was sent before the cut. */
export interface ReportedUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  output_tokens: number;
}

export interface RecordedRequest {
  index: number;
  method: string;
  path: string;
  /** the query string without '?' ('beta=true' from a client on the beta surface), '' when none */
  query: string;
  /** request headers without `authorization`, `x-api-key` and cookies */
  headers: Record<string, string>;
  /** which credential header was sent */
  auth: 'bearer' | 'x-api-key' | null;
  body: unknown;
  stream: boolean;
  status: number;
  /** 'ok', 'api-error', or the fault applied */
  outcome: 'ok' | 'api-error' | 'http-fault' | 'reset' | 'cut' | 'error-event' | 'client-closed';
  usage: ReportedUsage | null;
}

export interface RunningModelServer {
  /** root URL without /v1, as ANTHROPIC_BASE_URL expects */
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

const FAULT_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  503: 'api_error',
  529: 'overloaded_error',
};

export class ModelServer {
  readonly requests: RecordedRequest[] = [];
  readonly #options: ModelServerOptions;
  readonly #cache: CacheSim;
  readonly #seen = new Map<string, number>();
  #ids = 0;
  #server: Server | null = null;

  constructor(options: ModelServerOptions) {
    this.#options = options;
    this.#cache = new CacheSim({ now: options.now, minCacheableTokens: options.minCacheableTokens });
  }

  async start(): Promise<RunningModelServer> {
    if (this.#server !== null) throw new Error('model server already started');
    const server = createServer((req, res) => {
      this.#handle(req, res).catch((error: unknown) => {
        // A failure here is a bug of the fake itself: answer it loudly, never silently.
        if (!res.headersSent) this.#sendError(res, { status: 500, type: 'api_error', message: String(error) }, false);
        else res.destroy(error instanceof Error ? error : new Error(String(error)));
      });
    });
    this.#server = server;
    const port = await listenLoopback(server);
    return {
      url: `http://127.0.0.1:${port}`,
      requests: this.requests,
      close: () => this.close(),
    };
  }

  async close(): Promise<void> {
    const server = this.#server;
    if (server === null) return;
    this.#server = null;
    const closed = new Promise<void>((resolve, reject) => server.close((e) => (e ? reject(e) : resolve())));
    server.closeAllConnections();
    await closed;
  }

  #nextId = (prefix: string): string => `${prefix}_fake${String(++this.#ids).padStart(6, '0')}`;

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const url = new URL(req.url ?? '/', 'http://x');
    const path = url.pathname;
    const record: RecordedRequest = {
      index: this.requests.length + 1,
      method: req.method ?? 'GET',
      path,
      query: url.search.replace(/^\?/, ''),
      headers: publicHeaders(req),
      auth: authKind(req),
      body: safeParse(raw),
      stream: false,
      status: 0,
      outcome: 'ok',
      usage: null,
    };
    this.requests.push(record);

    // A connectivity probe (Claude Code sends `HEAD /` before its first call): no credentials needed.
    if ((req.method === 'HEAD' || req.method === 'GET') && path === '/') {
      record.status = 200;
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(req.method === 'GET' ? 'ok' : undefined);
      return;
    }
    const headerError = validateHeaders(req.headers, this.#options.apiKeys ?? null);
    if (headerError) return this.#reject(res, record, headerError);
    const isMessages = path === '/v1/messages' || path === '/v1/messages/count_tokens';
    if (req.method !== 'POST' || !isMessages) {
      return this.#reject(res, record, {
        status: 404,
        type: 'not_found_error',
        message: `Not found: ${req.method} ${path}`,
      });
    }
    if (record.body === undefined) {
      return this.#reject(res, record, {
        status: 400,
        type: 'invalid_request_error',
        message: 'request body is not valid JSON',
      });
    }
    const bodyError = validateBody(record.body, this.#options.models ?? null, betasOf(req.headers));
    if (bodyError) return this.#reject(res, record, bodyError);
    const body = record.body as RequestBody;

    if (path === '/v1/messages/count_tokens') {
      record.status = 200;
      const total = blocksOf(body).reduce((sum, b) => sum + b.tokens, 0);
      return sendJson(res, 200, { input_tokens: total }, this.#nextId('req'));
    }

    record.stream = body.stream === true;
    const key = createHash('sha256').update(raw).digest('hex');
    const repeat = this.#seen.get(key) ?? 0;
    this.#seen.set(key, repeat + 1);
    let turn: ScriptTurn;
    try {
      turn = await this.#options.script(toScriptRequest(body, record.index, repeat));
    } catch (error) {
      const message = `script failed: ${error instanceof Error ? error.message : String(error)}`;
      return this.#reject(res, record, { status: 500, type: 'api_error', message }, false);
    }
    if (turn.delayMs) await sleep(turn.delayMs);
    if (turn.fault && 'status' in turn.fault) return this.#httpFault(res, record, turn.fault);
    if (turn.fault?.type === 'reset') {
      record.outcome = 'reset';
      req.socket.destroy();
      return;
    }

    const input = this.#cache.account(body);
    const reply = buildReply(turn, body.model, this.#nextId);
    if (!record.stream) {
      record.status = 200;
      record.usage = { ...pickUsage(input), output_tokens: reply.outputTokens };
      return sendJson(res, 200, messageJson(reply, input), this.#nextId('req'));
    }
    const events = streamEvents(reply, input, this.#options.chunkChars ?? 24);
    await this.#stream(res, record, events, input, turn.fault, turn.chunkDelayMs ?? 0);
  }

  async #stream(
    res: ServerResponse,
    record: RecordedRequest,
    events: SseEvent[],
    input: InputUsage,
    fault: Fault | undefined,
    chunkDelayMs: number,
  ): Promise<void> {
    record.status = 200;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'request-id': this.#nextId('req'),
    });
    res.flushHeaders();
    let closed = false;
    res.on('close', () => {
      closed = true;
    });
    const stopAt = fault && 'afterEvents' in fault ? fault.afterEvents : Infinity;
    for (const [i, event] of events.entries()) {
      if (closed) {
        record.outcome = 'client-closed';
        return;
      }
      if (i >= stopAt) break;
      if (i > 0 && chunkDelayMs > 0) await sleep(chunkDelayMs);
      if (closed) {
        record.outcome = 'client-closed';
        return;
      }
      res.write(formatSse(event));
      // What the client has been sent is what it can count.
      if (event.event === 'message_start') record.usage = { ...pickUsage(input), output_tokens: 1 };
      if (event.event === 'message_delta' && record.usage) {
        record.usage.output_tokens = (event.data.usage as { output_tokens: number }).output_tokens;
      }
    }
    if (fault?.type === 'error-event') {
      record.outcome = 'error-event';
      const message = fault.message ?? 'Overloaded';
      res.end(formatSse({ event: 'error', data: errorJson('overloaded_error', message, this.#nextId('req')) }));
      return;
    }
    if (fault?.type === 'cut') {
      record.outcome = 'cut';
      if (fault.mode === 'destroy') res.destroy();
      else res.end();
      return;
    }
    res.end();
  }

  #httpFault(res: ServerResponse, record: RecordedRequest, fault: Extract<Fault, { status: number }>): void {
    record.status = fault.status;
    record.outcome = 'http-fault';
    const type = FAULT_TYPES[fault.status] ?? 'api_error';
    const requestId = this.#nextId('req');
    const headers: Record<string, string> = { 'content-type': 'application/json', 'request-id': requestId };
    if (fault.retryAfterMs !== undefined) {
      headers['retry-after-ms'] = String(fault.retryAfterMs);
      headers['retry-after'] = String(Math.ceil(fault.retryAfterMs / 1000));
    }
    const body =
      fault.body ?? errorJson(type, type === 'overloaded_error' ? 'Overloaded' : `fault ${fault.status}`, requestId);
    res.writeHead(fault.status, headers);
    res.end(JSON.stringify(body));
  }

  #reject(res: ServerResponse, record: RecordedRequest, error: ApiErrorSpec, retryable?: boolean): void {
    record.status = error.status;
    record.outcome = 'api-error';
    this.#sendError(res, error, retryable);
  }

  #sendError(res: ServerResponse, error: ApiErrorSpec, retryable?: boolean): void {
    const requestId = this.#nextId('req');
    const headers: Record<string, string> = { 'content-type': 'application/json', 'request-id': requestId };
    if (retryable === false) headers['x-should-retry'] = 'false';
    res.writeHead(error.status, headers);
    res.end(JSON.stringify(errorJson(error.type, error.message, requestId)));
  }
}

/** Starts a server with `options`; the handle's `close()` stops it. */
export async function startModelServer(options: ModelServerOptions): Promise<RunningModelServer> {
  return new ModelServer(options).start();
}

function pickUsage(input: InputUsage): Omit<ReportedUsage, 'output_tokens'> {
  return {
    input_tokens: input.input_tokens,
    cache_creation_input_tokens: input.cache_creation_input_tokens,
    cache_read_input_tokens: input.cache_read_input_tokens,
  };
}
