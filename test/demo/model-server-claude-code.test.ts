import { afterEach, describe, expect, it } from 'vitest';
import { startModelServer, type RunningModelServer } from '../../src/demo/model-server.js';
import { thinkingSignature } from '../../src/demo/validate.js';

/** What Claude Code sends that the plain SDK does not: the fake must answer it as the API does. */

const HEADERS = { 'x-api-key': 'k', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' };
let server: RunningModelServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

const post = (body: unknown, headers: Record<string, string> = HEADERS) =>
  fetch(`${server!.url}/v1/messages?beta=true`, { method: 'POST', headers, body: JSON.stringify(body) });

describe('the fake Messages API speaks Claude Code', () => {
  it('answers HEAD / without credentials and records the beta query', async () => {
    server = await startModelServer({ script: () => ({ text: 'ok' }) });
    expect((await fetch(`${server.url}/`, { method: 'HEAD' })).status).toBe(200);
    const r = await post({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    expect(r.status).toBe(200);
    expect(server.requests.at(-1)).toMatchObject({ path: '/v1/messages', query: 'beta=true' });
  });

  it('takes role:system messages only under the per-turn-control beta', async () => {
    server = await startModelServer({ script: (req) => ({ text: `sys=${req.systemMessages}` }) });
    const body = {
      model: 'm',
      max_tokens: 10,
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'system', content: 'Primary working directory: /w' },
      ],
    };
    expect((await post(body)).status).toBe(400);
    const ok = await post(body, { ...HEADERS, 'anthropic-beta': 'claude-code-20250219,per-turn-control-2026-07-01' });
    expect(ok.status).toBe(200);
    expect(JSON.stringify(await ok.json())).toContain('sys=Primary working directory: /w');
  });

  it('streams signed thinking blocks and refuses one sent back altered', async () => {
    server = await startModelServer({ script: () => ({ thinking: 'Let me think.', text: 'Answer.' }) });
    const r = await post({ model: 'm', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'hi' }] });
    const text = await r.text();
    expect(text).toContain('"type":"thinking_delta"');
    expect(text).toContain(`"signature":"${thinkingSignature('Let me think.')}"`);
    const history = (thinking: string) => ({
      model: 'm',
      max_tokens: 10,
      messages: [
        { role: 'user', content: 'hi' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking, signature: thinkingSignature('Let me think.') },
            { type: 'text', text: 'Answer.' },
          ],
        },
        { role: 'user', content: 'more' },
      ],
    });
    expect((await post(history('Let me think.'))).status).toBe(200);
    const bad = await post(history('Let me think differently.'));
    expect(bad.status).toBe(400);
    expect(JSON.stringify(await bad.json())).toContain('Invalid `signature` in `thinking` block');
  });
});
