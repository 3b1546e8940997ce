import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBody, safeParse, serveLoopback } from './http-util.js';

/**
 * A loopback fake of the Gemini API's `models/{model}:streamGenerateContent?alt=sse` (and the plain
 * `generateContent`), enough for the Gemini CLI: one scripted turn per request — a text or a function call —
 * with `usageMetadata`. Usage is deterministic: prompt = ceil(request bytes / 4), `cachedTokens` of it cached.
 */

export interface GeminiTurn {
  text?: string;
  call?: { name: string; args: Record<string, unknown> };
}

export interface GeminiRequest {
  body: Record<string, any>;
  model: string;
  /** the function responses in the last user turn, as JSON text */
  responses: string[];
  /** function calls in the history so far */
  calls: number;
}

export interface RunningGeminiServer {
  /** root URL, as GOOGLE_GEMINI_BASE_URL expects */
  url: string;
  requests: Array<{ path: string; keyed: boolean; usage: { prompt: number; cached: number; output: number } | null }>;
  close(): Promise<void>;
}

export async function startGeminiServer(
  script: (req: GeminiRequest) => GeminiTurn,
  cachedTokens = 0,
): Promise<RunningGeminiServer> {
  const requests: RunningGeminiServer['requests'] = [];
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const raw = await readBody(req);
    const url = new URL(req.url ?? '/', 'http://x');
    const keyed = typeof req.headers['x-goog-api-key'] === 'string' || url.searchParams.has('key');
    const record: RunningGeminiServer['requests'][number] = { path: url.pathname, keyed, usage: null };
    requests.push(record);
    const match = /^\/v1(?:beta)?\/models\/([^:]+):(streamGenerateContent|generateContent|countTokens)$/.exec(
      url.pathname,
    );
    const body = safeParse(raw) as Record<string, any> | undefined;
    if (req.method !== 'POST' || match === null || body === undefined) {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { code: 404, message: `not found: ${url.pathname}`, status: 'NOT_FOUND' } }));
      return;
    }
    if (!keyed) {
      res
        .writeHead(401, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { code: 401, message: 'API key not valid', status: 'UNAUTHENTICATED' } }));
      return;
    }
    const prompt = Math.ceil(raw.length / 4);
    if (match[2] === 'countTokens') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ totalTokens: prompt }));
      return;
    }
    const contents = (body.contents as Array<{ role?: string; parts?: Array<Record<string, any>> }> | undefined) ?? [];
    const last = contents.at(-1);
    const turn = script({
      body,
      model: match[1]!,
      responses: (last?.parts ?? [])
        .filter((p) => p.functionResponse !== undefined)
        .map((p) => JSON.stringify(p.functionResponse.response ?? {})),
      calls: contents.flatMap((c) => c.parts ?? []).filter((p) => p.functionCall !== undefined).length,
    });
    const parts: Array<Record<string, unknown>> = [];
    if (turn.text !== undefined) parts.push({ text: turn.text });
    if (turn.call !== undefined) parts.push({ functionCall: { name: turn.call.name, args: turn.call.args } });
    const output = Math.max(1, Math.ceil(JSON.stringify(parts).length / 4));
    const cached = Math.min(cachedTokens, prompt);
    record.usage = { prompt, cached, output };
    const answer = {
      candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
      usageMetadata: {
        promptTokenCount: prompt,
        candidatesTokenCount: output,
        totalTokenCount: prompt + output,
        cachedContentTokenCount: cached,
      },
      modelVersion: match[1],
    };
    if (match[2] === 'streamGenerateContent') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`data: ${JSON.stringify(answer)}\r\n\r\n`);
    } else {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    }
  };
  const { port, close } = await serveLoopback(handle);
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close,
  };
}
