import { afterEach, describe, expect, it } from 'vitest';
import { attemptMarker, roleMarker, taskMarker } from '../../src/core/roles/marker.js';
import { ModelServer, startModelServer, type RunningModelServer } from '../../src/demo/model-server.js';
import { byRole, byTurn, sequence } from '../../src/demo/script-kit.js';
import type { Script, ScriptRequest } from '../../src/demo/script-types.js';

const KEY = 'sk-test-server-key';
const HEADERS = {
  authorization: `Bearer ${KEY}`,
  'anthropic-version': '2026-10-21',
  'content-type': 'application/json',
};

let server: RunningModelServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

async function start(script: Script, options: Partial<ConstructorParameters<typeof ModelServer>[0]> = {}) {
  server = await startModelServer({ script, ...options });
  return server;
}

function post(body: unknown, headers: Record<string, string> = HEADERS, path = '/v1/messages') {
  return fetch(`${server!.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
}

interface Sse {
  event: string;
  data: any;
}

function parseSse(text: string): Sse[] {
  return text
    .split('\n\n')
    .filter((chunk) => chunk.trim() !== '')
    .map((chunk) => {
      const lines = chunk.split('\n');
      const event = lines.find((l) => l.startsWith('event: '))?.slice(7) ?? '';
      const data = lines.find((l) => l.startsWith('data: '))?.slice(6) ?? 'null';
      return { event, data: JSON.parse(data) };
    });
}

const base = { model: 'claude-sonnet-5-5', max_tokens: 1000, messages: [{ role: 'user', content: 'hello' }] };

describe('fake Messages API: streaming', () => {
  it('streams SSE with event lines, usage in message_start and message_delta, split tool input', async () => {
    await start(() => ({
      text: 'I will read the file now, then change it.',
      toolUses: [{ name: 'read', input: { file_path: 'src/index.js', view_range: [1, 40] } }],
    }));
    const res = await post({ ...base, stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const raw = await res.text();
    const events = parseSse(raw);
    expect(
      raw
        .split('\n\n')
        .filter((c) => c.trim())
        .every((c) => c.startsWith('event: ')),
    ).toBe(true);
    const names = events.map((e) => e.event);
    expect(names[0]).toBe('message_start');
    expect(names).toContain('ping');
    expect(names.at(-2)).toBe('message_delta');
    expect(names.at(-1)).toBe('message_stop');

    const usage = events[0]!.data.message.usage;
    expect(usage).toMatchObject({
      input_tokens: expect.any(Number),
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: 1,
    });

    const text = events.filter((e) => e.data.delta?.type === 'text_delta').map((e) => e.data.delta.text);
    expect(text.length).toBeGreaterThan(1);
    expect(text.join('')).toBe('I will read the file now, then change it.');

    const json = events.filter((e) => e.data.delta?.type === 'input_json_delta').map((e) => e.data.delta.partial_json);
    expect(json.length).toBeGreaterThanOrEqual(2);
    expect(JSON.parse(json.join(''))).toEqual({ file_path: 'src/index.js', view_range: [1, 40] });
    const toolStart = events.find((e) => e.event === 'content_block_start' && e.data.content_block.type === 'tool_use');
    expect(toolStart!.data.content_block).toMatchObject({ name: 'read', input: {} });

    const delta = events.at(-2)!.data;
    expect(delta.delta.stop_reason).toBe('tool_use');
    expect(delta.usage.output_tokens).toBeGreaterThan(1);
    expect(server!.requests[0]!.usage!.output_tokens).toBe(delta.usage.output_tokens);
  });

  it('answers without stream as one Message object', async () => {
    await start(() => ({ text: 'plain answer' }));
    const res = await post(base);
    const body = (await res.json()) as any;
    expect(body).toMatchObject({
      type: 'message',
      role: 'assistant',
      stop_reason: 'end_turn',
      content: [{ type: 'text', text: 'plain answer' }],
    });
    expect(body.usage.output_tokens).toBe(Math.ceil('plain answer'.length / 4));
  });
});

describe('fake Messages API: validation', () => {
  const cases: Array<[string, Record<string, unknown>, number, string]> = [
    ['temperature', { ...base, temperature: 0.2 }, 400, 'temperature'],
    ['top_p', { ...base, top_p: 0.9 }, 400, 'top_p'],
    ['top_k', { ...base, top_k: 5 }, 400, 'top_k'],
    ['forced tool_choice any', { ...base, tool_choice: { type: 'any' } }, 400, 'tool_choice'],
    ['forced tool_choice tool', { ...base, tool_choice: { type: 'tool', name: 'read' } }, 400, 'tool_choice'],
    ['a thread', { ...base, thread: { type: 'create' } }, 400, 'thread'],
    ['no model', { max_tokens: 10, messages: base.messages }, 400, 'model'],
    ['no max_tokens', { model: 'm', messages: base.messages }, 400, 'max_tokens'],
    ['no messages', { model: 'm', max_tokens: 10 }, 400, 'messages'],
    ['a bad output format', { ...base, output_config: { format: { type: 'json', schema: {} } } }, 400, 'output_config'],
    [
      'an unanswered tool_use',
      {
        ...base,
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'read', input: {} }] },
          { role: 'user', content: 'go on' },
        ],
      },
      400,
      'tool_result',
    ],
  ];
  it.each(cases)('rejects %s with the API error shape', async (_name, body, status, mention) => {
    await start(() => ({ text: 'never' }));
    const res = await post(body);
    expect(res.status).toBe(status);
    const json = (await res.json()) as any;
    expect(json).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: expect.stringContaining(mention) },
    });
    expect(res.headers.get('request-id')).toBeTruthy();
  });

  it('accepts tool_choice auto and a valid structured output format', async () => {
    await start(() => ({ text: '{"pass":true,"reasons":[]}' }));
    const res = await post({
      ...base,
      tool_choice: { type: 'auto' },
      output_config: { format: { type: 'json_schema', schema: { type: 'object' } } },
    });
    expect(res.status).toBe(200);
  });

  it('requires credentials and anthropic-version; accepts x-api-key too', async () => {
    await start(() => ({ text: 'ok' }), { apiKeys: [KEY] });
    const { authorization: _a, ...noAuth } = HEADERS;
    const r1 = await post(base, noAuth);
    expect(r1.status).toBe(401);
    expect(((await r1.json()) as any).error.type).toBe('authentication_error');
    const r2 = await post(base, { ...HEADERS, authorization: 'Bearer wrong' });
    expect(r2.status).toBe(401);
    const { 'anthropic-version': _v, ...noVersion } = HEADERS;
    const r3 = await post(base, noVersion);
    expect(r3.status).toBe(400);
    expect(((await r3.json()) as any).error.message).toContain('anthropic-version');
    const r4 = await post(base, { ...noAuth, 'x-api-key': KEY });
    expect(r4.status).toBe(200);
    const r5 = await post(base, HEADERS, '/v1/complete');
    expect(r5.status).toBe(404);
    expect(((await r5.json()) as any).error.type).toBe('not_found_error');
  });

  it('records requests without secrets', async () => {
    await start(() => ({ text: 'ok' }));
    await post({ ...base, metadata: { user_id: 'u' } });
    const [rec] = server!.requests;
    expect(rec!.auth).toBe('bearer');
    expect(rec!.headers.authorization).toBeUndefined();
    expect(JSON.stringify(rec)).not.toContain(KEY);
    expect(rec!.headers['anthropic-version']).toBe('2026-10-21');
    expect(rec!.body).toMatchObject({ metadata: { user_id: 'u' } });
  });
});

describe('fake Messages API: prompt caching', () => {
  const system = [
    { type: 'text', text: 'You are a careful engineer. '.repeat(40), cache_control: { type: 'ephemeral' } },
  ];

  async function usageOf(body: unknown) {
    const res = await post(body);
    return ((await res.json()) as any).usage;
  }

  it('writes a prefix once and reads it on the next identical-prefix call', async () => {
    await start(() => ({ text: 'ok' }));
    const first = await usageOf({ ...base, system });
    expect(first.cache_creation_input_tokens).toBeGreaterThan(200);
    expect(first.cache_read_input_tokens).toBe(0);
    const second = await usageOf({ ...base, system, messages: [{ role: 'user', content: 'a different question' }] });
    expect(second.cache_read_input_tokens).toBe(first.cache_creation_input_tokens);
    expect(second.cache_creation_input_tokens).toBe(0);
    expect(second.input_tokens).toBe(
      Math.ceil(JSON.stringify({ type: 'text', text: 'a different question' }).length / 4),
    );
  });

  it('follows a growing conversation with the top-level cache_control', async () => {
    await start(() => ({ text: 'ok' }));
    const turn1 = [{ role: 'user', content: 'first question about the code base, with detail. '.repeat(5) }];
    const u1 = await usageOf({ ...base, system, messages: turn1, cache_control: { type: 'ephemeral' } });
    expect(u1.input_tokens).toBe(0);
    const turn2 = [...turn1, { role: 'assistant', content: 'an answer' }, { role: 'user', content: 'a follow-up' }];
    const u2 = await usageOf({ ...base, system, messages: turn2, cache_control: { type: 'ephemeral' } });
    expect(u2.cache_read_input_tokens).toBe(u1.cache_creation_input_tokens);
    expect(u2.cache_creation_input_tokens).toBeGreaterThan(0);
    expect(u2.input_tokens).toBe(0);
  });

  it('expires entries after the TTL and honours a minimum cacheable length', async () => {
    let now = 1_000_000;
    await start(() => ({ text: 'ok' }), { now: () => now });
    const first = await usageOf({ ...base, system });
    now += 4 * 60_000;
    expect((await usageOf({ ...base, system })).cache_read_input_tokens).toBe(first.cache_creation_input_tokens);
    now += 5 * 60_000 + 1; // the read refreshed the entry: 5 minutes from the last read
    expect((await usageOf({ ...base, system })).cache_creation_input_tokens).toBe(first.cache_creation_input_tokens);

    await server!.close();
    await start(() => ({ text: 'ok' }), { minCacheableTokens: 100_000 });
    const small = await usageOf({ ...base, system });
    expect(small.cache_creation_input_tokens).toBe(0);
    expect(small.input_tokens).toBe(first.cache_creation_input_tokens + first.input_tokens);
  });
});

describe('fake Messages API: faults and scripts', () => {
  it('answers a status fault with retry-after headers', async () => {
    await start(sequence([{ fault: { status: 429, retryAfterMs: 1500 } }, { text: 'ok' }]));
    const res = await post(base);
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after-ms')).toBe('1500');
    expect(res.headers.get('retry-after')).toBe('2');
    expect(((await res.json()) as any).error.type).toBe('rate_limit_error');
    expect((await post(base)).status).toBe(200);
  });

  it('resets the connection', async () => {
    await start(() => ({ fault: { type: 'reset' } }));
    await expect(post(base)).rejects.toThrow();
    expect(server!.requests[0]!.outcome).toBe('reset');
  });

  it('cuts a stream and sends an error event inside a 200', async () => {
    await start(
      sequence([
        { text: 'abc def ghi', fault: { type: 'cut', afterEvents: 3 } },
        { text: 'x', fault: { type: 'error-event', afterEvents: 2 } },
      ]),
    );
    const cut = parseSse(await (await post({ ...base, stream: true })).text());
    expect(cut.map((e) => e.event)).toEqual(['message_start', 'ping', 'content_block_start']);
    const res = await post({ ...base, stream: true });
    expect(res.status).toBe(200);
    const errored = parseSse(await res.text());
    expect(errored.at(-1)).toEqual({
      event: 'error',
      data: expect.objectContaining({ error: { type: 'overloaded_error', message: 'Overloaded' } }),
    });
    expect(server!.requests.map((r) => r.outcome)).toEqual(['cut', 'error-event']);
  });

  it('gives scripts the role, task, attempt, turns, tool results and repeats', async () => {
    const seen: ScriptRequest[] = [];
    await start(
      byRole({
        implementer: (req) => {
          seen.push(req);
          return byTurn([{ toolUses: [{ name: 'read', input: { file_path: 'a' } }] }, { text: 'done' }])(req);
        },
      }),
    );
    const system = `You implement.\n\n${roleMarker('implementer')}\n`;
    const prompt = `${taskMarker('T-7')}\n${attemptMarker(2)}\n\n# Task T-7`;
    const body = {
      ...base,
      system,
      tools: [{ name: 'read', input_schema: { type: 'object' } }],
      messages: [
        { role: 'user', content: prompt },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_9', name: 'read', input: { file_path: 'a' } }] },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: 'toolu_9', content: 'file body', is_error: false }],
        },
      ],
    };
    expect(((await (await post(body)).json()) as any).content).toEqual([{ type: 'text', text: 'done' }]);
    await post(body);
    expect(seen[0]).toMatchObject({
      role: 'implementer',
      taskId: 'T-7',
      attempt: 2,
      assistantTurns: 1,
      tools: ['read'],
      toolResults: [{ toolUseId: 'toolu_9', name: 'read', content: 'file body', isError: false }],
      repeat: 0,
      index: 1,
    });
    expect(seen[1]).toMatchObject({ repeat: 1, index: 2 });
  });

  it('answers a failing script with a 500 that is not retried', async () => {
    await start(() => {
      throw new Error('boom');
    });
    const res = await post(base);
    expect(res.status).toBe(500);
    expect(res.headers.get('x-should-retry')).toBe('false');
    expect(((await res.json()) as any).error.message).toContain('boom');
  });
});
