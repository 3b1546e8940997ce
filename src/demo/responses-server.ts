import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBody, safeParse, serveLoopback } from './http-util.js';

/**
 * A loopback fake of the OpenAI Responses API (`POST /v1/responses`, streaming), enough for the Codex CLI:
 * each request gets one scripted turn — a message, or a function call (`shell`, `apply_patch`...) — as SSE
 * `response.created`, `response.output_item.added/done`, `response.output_text.delta`, `response.completed`
 * with usage. Usage is deterministic: input = ceil(request bytes / 4), of which `cachedTokens` cached.
 */

export interface ResponsesTurn {
  text?: string;
  call?: { name: string; arguments: Record<string, unknown> };
}

export interface ResponsesRequest {
  body: Record<string, any>;
  /** function_call_output items of the request, in order */
  outputs: string[];
  /** how many function calls the history holds (0 on the first request of a turn) */
  calls: number;
}

export interface RunningResponsesServer {
  /** base URL including /v1, as Codex's provider `base_url` expects */
  url: string;
  requests: Array<{
    path: string;
    auth: boolean;
    body: unknown;
    usage: { input: number; cached: number; output: number } | null;
  }>;
  close(): Promise<void>;
}

function sse(res: ServerResponse, type: string, data: Record<string, unknown>): void {
  res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
}

export async function startResponsesServer(
  script: (req: ResponsesRequest) => ResponsesTurn,
  cachedTokens = 0,
): Promise<RunningResponsesServer> {
  const requests: RunningResponsesServer['requests'] = [];
  let ids = 0;
  const id = (p: string) => `${p}_fake${String(++ids).padStart(5, '0')}`;
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const raw = await readBody(req);
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const body = safeParse(raw) as Record<string, any> | undefined;
    const record: RunningResponsesServer['requests'][number] = {
      path,
      auth: typeof req.headers.authorization === 'string',
      body,
      usage: null,
    };
    requests.push(record);
    if (req.method !== 'POST' || path !== '/v1/responses' || body === undefined) {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: `not found: ${req.method} ${path}`, type: 'invalid_request_error' } }));
      return;
    }
    if (!record.auth) {
      res.writeHead(401, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          error: { message: 'missing bearer token', type: 'invalid_request_error', code: 'invalid_api_key' },
        }),
      );
      return;
    }
    const input = (body.input as Array<Record<string, any>> | undefined) ?? [];
    const turn = script({
      body,
      outputs: input
        .filter((i) => i.type === 'function_call_output')
        .map((i) => String(typeof i.output === 'string' ? i.output : JSON.stringify(i.output))),
      calls: input.filter((i) => i.type === 'function_call').length,
    });
    const responseId = id('resp');
    const inputTokens = Math.ceil(raw.length / 4);
    const cached = Math.min(cachedTokens, inputTokens);
    const items: Array<Record<string, unknown>> = [];
    let outputTokens = 1;
    if (turn.text !== undefined) {
      items.push({
        type: 'message',
        id: id('msg'),
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: turn.text, annotations: [] }],
      });
      outputTokens += Math.ceil(turn.text.length / 4);
    }
    if (turn.call !== undefined) {
      const args = JSON.stringify(turn.call.arguments);
      items.push({
        type: 'function_call',
        id: id('fc'),
        call_id: id('call'),
        name: turn.call.name,
        arguments: args,
        status: 'completed',
      });
      outputTokens += Math.ceil(args.length / 4);
    }
    record.usage = { input: inputTokens, cached, output: outputTokens };
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const response = {
      id: responseId,
      object: 'response',
      model: body.model,
      status: 'in_progress',
      output: [] as unknown[],
    };
    sse(res, 'response.created', { response });
    items.forEach((item, output_index) => {
      sse(res, 'response.output_item.added', { output_index, item });
      if (item.type === 'message')
        sse(res, 'response.output_text.delta', { output_index, content_index: 0, item_id: item.id, delta: turn.text });
      sse(res, 'response.output_item.done', { output_index, item });
    });
    sse(res, 'response.completed', {
      response: {
        ...response,
        status: 'completed',
        output: items,
        usage: {
          input_tokens: inputTokens,
          input_tokens_details: { cached_tokens: cached },
          output_tokens: outputTokens,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: inputTokens + outputTokens,
        },
      },
    });
    res.end();
  };
  const { port, close } = await serveLoopback(handle);
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close,
  };
}
