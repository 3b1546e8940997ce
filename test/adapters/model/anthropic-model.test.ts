import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AnthropicModelClient } from '../../../src/adapters/model/anthropic-model.js';
import { GateError } from '../../../src/domain/errors.js';
import { roleMarker, taskMarker } from '../../../src/core/roles/marker.js';
import { addUsage, ZERO_USAGE, type Role, type Usage } from '../../../src/domain/types.js';
import { startModelServer, type RunningModelServer } from '../../../src/demo/model-server.js';
import { byTurn, sequence } from '../../../src/demo/script-kit.js';
import type { Script, ScriptTurn } from '../../../src/demo/script-types.js';
import type { AgentEvent, AgentRequest } from '../../../src/ports/model.js';
import { RecordingRunner } from '../../helpers/recording-runner.js';

const KEY = 'sk-ant-test-0123456789abcdef';

let dir: string;
let server: RunningModelServer | null = null;
let runner: RecordingRunner;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'loopfleet-model-'));
  await writeFile(join(dir, 'README.md'), '# Sample\n\nThe answer is 42.\n');
  await mkdir(join(dir, 'src'));
  await writeFile(join(dir, 'src', 'index.js'), 'export const answer = 41;\n');
  runner = new RecordingRunner();
});

afterEach(async () => {
  await server?.close();
  server = null;
  await rm(dir, { recursive: true, force: true });
});

async function serve(script: Script, options: { apiKeys?: string[] } = {}) {
  await server?.close();
  server = await startModelServer({ script, apiKeys: options.apiKeys ?? [KEY] });
  return server;
}

function client(options: Partial<ConstructorParameters<typeof AnthropicModelClient>[0]> = {}) {
  return new AnthropicModelClient({
    apiKey: KEY,
    baseURL: server!.url,
    processRunner: runner,
    sandboxAvailable: false,
    ...options,
  });
}

function request(role: Role, over: Partial<AgentRequest> = {}): AgentRequest {
  return {
    role,
    model: 'claude-sonnet-5-5',
    system: `You are the ${role} of a coding fleet. Work carefully and explain briefly.\n\n${roleMarker(role)}\n`,
    prompt: `${taskMarker('T-1')}\n\n# Task T-1: make the answer 42`,
    workdir: dir,
    access: role === 'implementer' ? 'write' : 'read-only',
    shell: role === 'implementer',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir },
    maxTurns: 12,
    maxTokens: 4096,
    signal: new AbortController().signal,
    beforeCall: () => {},
    timeoutMs: 60_000,
    ...over,
  };
}

function collect() {
  const events: AgentEvent[] = [];
  const usage = () =>
    events.reduce<Usage>((sum, e) => (e.type === 'usage' ? addUsage(sum, e.usage) : sum), { ...ZERO_USAGE });
  return { events, onEvent: (e: AgentEvent) => events.push(e), usage };
}

function serverUsage(): Usage {
  return server!.requests.reduce<Usage>(
    (sum, r) =>
      r.usage
        ? addUsage(sum, {
            input: r.usage.input_tokens,
            output: r.usage.output_tokens,
            cacheWrite: r.usage.cache_creation_input_tokens,
            cacheRead: r.usage.cache_read_input_tokens,
          })
        : sum,
    { ...ZERO_USAGE },
  );
}

async function failure(run: Promise<unknown>): Promise<Error> {
  const outcome = await run.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(outcome instanceof Error)) throw new Error('expected the run to fail with an Error');
  return outcome;
}

function toolNames(i = 0): string[] {
  return ((server!.requests[i]!.body as any).tools as Array<{ name: string }>).map((t) => t.name);
}

describe('AnthropicModelClient: tools in a real worktree', () => {
  it('lets the explorer read a file through the read tool, with read-only tools only', async () => {
    await serve(
      byTurn([
        { text: 'Reading the readme.', toolUses: [{ name: 'read', input: { file_path: 'README.md' } }] },
        { text: 'Plan: change src/index.js.' },
      ]),
    );
    const sink = collect();
    const result = await client().runAgent(request('explorer'), sink.onEvent);
    expect(result).toMatchObject({ text: 'Plan: change src/index.js.', turns: 2, stopReason: 'end_turn' });
    expect(toolNames()).toEqual(['read', 'glob', 'grep']);
    const second = server!.requests[1]!.body as any;
    const toolResult = second.messages.at(-1).content[0];
    expect(toolResult).toMatchObject({ type: 'tool_result' });
    expect(JSON.stringify(toolResult.content)).toContain('The answer is 42.');
    expect(sink.events).toContainEqual({ type: 'tool', name: 'read', input: '{"file_path":"README.md"}' });
    expect(sink.events).toContainEqual(expect.objectContaining({ type: 'tool-result', name: 'read', isError: false }));
    expect(
      sink.events
        .filter((e) => e.type === 'text')
        .map((e) => (e as { text: string }).text)
        .join(''),
    ).toContain('Reading the readme.');
  });

  it('lets the implementer write and edit files in the workdir', async () => {
    await serve(
      byTurn([
        {
          toolUses: [
            { name: 'write', input: { file_path: 'src/new.js', content: 'export const made = true;\n' } },
            { name: 'edit', input: { file_path: 'src/index.js', old_string: '41', new_string: '42' } },
          ],
        },
        { text: 'Changed two files.' },
      ]),
    );
    const result = await client().runAgent(request('implementer'), () => {});
    expect(result.text).toBe('Changed two files.');
    expect(await readFile(join(dir, 'src', 'new.js'), 'utf8')).toBe('export const made = true;\n');
    expect(await readFile(join(dir, 'src', 'index.js'), 'utf8')).toBe('export const answer = 42;\n');
    expect(toolNames()).toEqual(['read', 'write', 'edit', 'glob', 'grep', 'bash']);
  });

  it('refuses paths outside the worktree, symlinks out of it, and .git', async () => {
    const outside = await mkdtemp(join(tmpdir(), 'loopfleet-outside-'));
    await writeFile(join(outside, 'secret.txt'), 'top secret');
    await symlink(outside, join(dir, 'link-out'));
    await mkdir(join(dir, '.git'));
    await writeFile(join(dir, '.git', 'config'), '[core]\n');
    try {
      await serve(
        byTurn([
          {
            toolUses: [
              { name: 'write', input: { file_path: '../escaped.txt', content: 'x' } },
              { name: 'write', input: { file_path: join(outside, 'abs.txt'), content: 'x' } },
              { name: 'read', input: { file_path: '/etc/hostname' } },
              { name: 'read', input: { file_path: 'link-out/secret.txt' } },
              { name: 'read', input: { file_path: '.git/config' } },
              { name: 'write', input: { file_path: 'src/../.git/hooks/pre-commit', content: 'x' } },
            ],
          },
          { text: 'done' },
        ]),
      );
      const sink = collect();
      await client().runAgent(request('implementer'), sink.onEvent);
      const results = sink.events.filter((e) => e.type === 'tool-result');
      expect(results).toHaveLength(6);
      expect(results.every((r) => r.type === 'tool-result' && r.isError)).toBe(true);
      expect(JSON.stringify(results)).not.toContain('top secret');
      expect(existsSync(join(dir, '..', 'escaped.txt'))).toBe(false);
      expect(existsSync(join(outside, 'abs.txt'))).toBe(false);
      expect(existsSync(join(dir, '.git', 'hooks'))).toBe(false);
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it('runs the shell tool through the ProcessRunner, sandboxed when the sandbox is available', async () => {
    await serve(
      byTurn([
        { toolUses: [{ name: 'bash', input: { command: 'echo hi > by-shell.txt && echo done' } }] },
        { text: 'ok' },
      ]),
    );
    const sink = collect();
    await client({ sandboxAvailable: true }).runAgent(request('implementer'), sink.onEvent);
    expect(runner.calls).toHaveLength(1);
    const [call] = runner.calls;
    expect(call!.command).toBe('echo hi > by-shell.txt && echo done');
    expect(call!.options).toMatchObject({
      cwd: dir,
      env: request('implementer').env,
      timeoutMs: 120_000,
      sandbox: { writable: [dir] },
      maxOutputBytes: 30_000,
    });
    expect(call!.options.signal).toBeInstanceOf(AbortSignal);
    expect(await readFile(join(dir, 'by-shell.txt'), 'utf8')).toBe('hi\n');
    expect(sink.events).toContainEqual({ type: 'tool-result', name: 'bash', output: 'done\n', isError: false });

    await serve(byTurn([{ toolUses: [{ name: 'bash', input: { command: 'exit 3' } }] }, { text: 'ok' }]));
    const failed = collect();
    await client({ sandboxAvailable: false }).runAgent(request('implementer'), failed.onEvent);
    expect(runner.calls[1]!.options.sandbox).toBeNull();
    expect(failed.events).toContainEqual(
      expect.objectContaining({
        type: 'tool-result',
        name: 'bash',
        isError: true,
        output: expect.stringContaining('exit code 3'),
      }),
    );
  });

  it('offers no shell tool when request.shell is false, and the SDK bash never runs', async () => {
    await serve(
      byTurn([{ toolUses: [{ name: 'bash', input: { command: 'touch should-not-exist' } }] }, { text: 'ok' }]),
    );
    const sink = collect();
    await client().runAgent(request('implementer', { shell: false }), sink.onEvent);
    expect(toolNames()).toEqual(['read', 'write', 'edit', 'glob', 'grep']);
    expect(runner.calls).toHaveLength(0);
    expect(existsSync(join(dir, 'should-not-exist'))).toBe(false);
    const answer = (server!.requests[1]!.body as any).messages.at(-1).content[0];
    expect(answer).toMatchObject({ type: 'tool_result', is_error: true });
    expect(JSON.stringify(answer.content)).toContain('not found');
  });
});

describe('AnthropicModelClient: requests and usage', () => {
  const implementerRun: ScriptTurn[] = [
    { text: 'Looking around.', toolUses: [{ name: 'glob', input: { pattern: '**/*.js' } }] },
    { toolUses: [{ name: 'read', input: { file_path: 'src/index.js' } }] },
    { toolUses: [{ name: 'grep', input: { pattern: 'answer' } }] },
    { toolUses: [{ name: 'edit', input: { file_path: 'src/index.js', old_string: '41', new_string: '42' } }] },
    { toolUses: [{ name: 'read', input: { file_path: 'src/index.js' } }] },
    { text: 'The answer is now 42.' },
  ];

  it('sends cache breakpoints and the full history, never sampling params or a thread', async () => {
    await serve(byTurn(implementerRun));
    await client().runAgent(request('implementer'), () => {});
    expect(server!.requests).toHaveLength(6);
    for (const [i, rec] of server!.requests.entries()) {
      const body = rec.body as any;
      expect(rec.status).toBe(200);
      expect(rec.auth).toBe('bearer');
      expect(rec.headers['anthropic-version']).toBe('2026-10-21');
      for (const p of ['temperature', 'top_p', 'top_k', 'thread', 'tool_choice']) expect(body).not.toHaveProperty(p);
      expect(body.stream).toBe(true);
      expect(body.cache_control).toEqual({ type: 'ephemeral' });
      expect(body.system).toEqual([
        { type: 'text', text: request('implementer').system, cache_control: { type: 'ephemeral' } },
      ]);
      expect(body.tools.at(-1).cache_control).toEqual({ type: 'ephemeral' });
      expect(body.tools.slice(0, -1).some((t: any) => 'cache_control' in t)).toBe(false);
      expect(body.messages).toHaveLength(1 + 2 * i);
    }
  });

  it('reports usage deltas that sum exactly to what the server reported, cache reads dominating', async () => {
    await serve(byTurn(implementerRun));
    const sink = collect();
    await client().runAgent(request('implementer'), sink.onEvent);
    const got = sink.usage();
    expect(got).toEqual(serverUsage());
    expect(got.cacheWrite).toBeGreaterThan(0);
    expect(got.cacheRead).toBeGreaterThan(0);
    const input = got.input + got.cacheWrite + got.cacheRead;
    expect(got.cacheRead / input).toBeGreaterThanOrEqual(0.6);
    expect(
      sink.events.filter((e) => e.type === 'usage').every((e) => e.type === 'usage' && e.model === 'claude-sonnet-5-5'),
    ).toBe(true);
  });

  it('asks for structured output and returns the JSON text', async () => {
    await serve(() => ({ text: '{"pass":true,"reasons":["check passes"]}' }));
    const schema = { type: 'object', properties: { pass: { type: 'boolean' } }, required: ['pass'] };
    const result = await client().runAgent(request('verifier', { outputSchema: schema }), () => {});
    expect(JSON.parse(result.text)).toEqual({ pass: true, reasons: ['check passes'] });
    expect((server!.requests[0]!.body as any).output_config).toEqual({ format: { type: 'json_schema', schema } });
  });

  it('stops after maxTurns requests', async () => {
    await serve(() => ({ toolUses: [{ name: 'glob', input: { pattern: '*' } }] }));
    const result = await client().runAgent(request('explorer', { maxTurns: 2 }), () => {});
    expect(server!.requests).toHaveLength(2);
    expect(result).toMatchObject({ turns: 2, stopReason: 'tool_use' });
  });

  it('calls beforeCall before every request and stops when it throws', async () => {
    await serve(byTurn(implementerRun));
    let calls = 0;
    const gate = new GateError('tokens', 'task', 'task T-1 used its 1k tokens');
    const beforeCall = () => {
      calls += 1;
      if (calls === 3) throw gate;
    };
    await expect(client().runAgent(request('implementer', { beforeCall }), () => {})).rejects.toBe(gate);
    expect(calls).toBe(3);
    expect(server!.requests).toHaveLength(2);

    const first = new GateError('cost', 'fleet', 'the fleet spent its budget');
    const refuse = () => {
      throw first;
    };
    await expect(client().runAgent(request('explorer', { beforeCall: refuse }), () => {})).rejects.toBe(first);
    expect(server!.requests).toHaveLength(2);
  });
});

describe('AnthropicModelClient: aborts, retries and failures', () => {
  it('aborts mid-stream at once, keeping the usage streamed so far, and rethrows the reason', async () => {
    await serve(() => ({ text: 'word '.repeat(400), chunkDelayMs: 20 }));
    const controller = new AbortController();
    const gate = new GateError('time', 'task', 'task T-1 ran out of time');
    const sink = collect();
    const started = Date.now();
    const run = client().runAgent(request('explorer', { signal: controller.signal }), (e) => {
      sink.onEvent(e);
      if (e.type === 'text' && sink.events.filter((x) => x.type === 'text').length === 3) controller.abort(gate);
    });
    await expect(run).rejects.toBe(gate);
    expect(Date.now() - started).toBeLessThan(4_000);
    const got = sink.usage();
    expect(got.input + got.cacheWrite).toBeGreaterThan(0);
    expect(got.output).toBe(1);
    expect(got).toEqual(serverUsage());
  });

  it('rethrows an AbortError when the abort reason is not an Error', async () => {
    await serve(() => ({ text: 'word '.repeat(200), chunkDelayMs: 20 }));
    const controller = new AbortController();
    setTimeout(() => controller.abort('quit'), 100);
    await expect(client().runAgent(request('explorer', { signal: controller.signal }), () => {})).rejects.toMatchObject(
      { name: 'AbortError' },
    );
  });

  it('retries a 429 after its retry-after, then succeeds; beforeCall runs before the retry too', async () => {
    await serve(sequence([{ fault: { status: 429, retryAfterMs: 150 } }, { text: 'after the wait' }]));
    let calls = 0;
    const started = Date.now();
    const result = await client().runAgent(request('explorer', { beforeCall: () => void (calls += 1) }), () => {});
    expect(result.text).toBe('after the wait');
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(server!.requests.map((r) => r.status)).toEqual([429, 200]);
    expect(calls).toBe(2);
  });

  it('retries a 529 overload and a connection reset', async () => {
    await serve(
      sequence([{ fault: { status: 529, retryAfterMs: 10 } }, { fault: { type: 'reset' } }, { text: 'third time' }]),
    );
    const result = await client().runAgent(request('explorer'), () => {});
    expect(result.text).toBe('third time');
    expect(server!.requests.map((r) => r.outcome)).toEqual(['http-fault', 'reset', 'ok']);
  });

  it('gives up after maxRetries with the status and the API message', async () => {
    await serve(() => ({ fault: { status: 529, retryAfterMs: 5 } }));
    const run = client({ maxRetries: 1 }).runAgent(request('explorer'), () => {});
    await expect(run).rejects.toThrow(/529.*overloaded_error.*Overloaded/);
    expect(server!.requests).toHaveLength(2);
  });

  it('fails on a cut stream without retrying, counting what was streamed', async () => {
    await serve(() => ({ text: 'a b c d e f g h', fault: { type: 'cut', afterEvents: 4 } }));
    const sink = collect();
    await expect(client().runAgent(request('explorer'), sink.onEvent)).rejects.toThrow(/stream/);
    expect(server!.requests).toHaveLength(1);
    expect(sink.usage()).toEqual(serverUsage());
  });

  it('fails on an error event inside a 200 stream with the API message', async () => {
    await serve(() => ({
      text: 'a b c',
      fault: { type: 'error-event', afterEvents: 3, message: 'Overloaded right now' },
    }));
    await expect(client().runAgent(request('explorer'), () => {})).rejects.toThrow(
      /overloaded_error.*Overloaded right now/,
    );
    expect(server!.requests).toHaveLength(1);
  });

  it('never puts the API key in an error message', async () => {
    await serve(() => ({
      fault: {
        status: 400,
        body: { type: 'error', error: { type: 'invalid_request_error', message: `bad key ${KEY} in request` } },
      },
    }));
    const error = await failure(client().runAgent(request('explorer'), () => {}));
    expect(error.message).toContain('400');
    expect(error.message).toContain('[redacted]');
    expect(`${error.message}\n${error.stack}`).not.toContain(KEY);

    await serve(() => ({ text: 'never' }), { apiKeys: ['a-different-key'] });
    const denied = await failure(client().runAgent(request('explorer'), () => {}));
    expect(denied.message).toMatch(/401.*authentication_error/);
    expect(denied.message).not.toContain(KEY);
  });

  it('stops a call that outlives request.timeoutMs, and takes a huge limit as none', async () => {
    await serve(() => ({ text: 'word '.repeat(400), chunkDelayMs: 20 }));
    await expect(client().runAgent(request('explorer', { timeoutMs: 200 }), () => {})).rejects.toThrow(
      /did not finish within <1s/,
    );
    await serve(() => ({ text: 'word '.repeat(5), chunkDelayMs: 5 }));
    const result = await client().runAgent(request('explorer', { timeoutMs: Number.MAX_SAFE_INTEGER }), () => {});
    expect(result.stopReason).toBe('end_turn');
  });

  it('sends an auth token as a bearer token, and a placeholder key for a keyless local server', async () => {
    await serve(() => ({ text: 'ok' }));
    await client({ apiKey: undefined, authToken: KEY }).runAgent(request('explorer'), () => {});
    expect(server!.requests[0]).toMatchObject({ status: 200, auth: 'bearer' });
    await serve(() => ({ text: 'ok' }), { apiKeys: ['no-key'] });
    const keyless = new AnthropicModelClient({ baseURL: server!.url, processRunner: runner, sandboxAvailable: false });
    expect((await keyless.runAgent(request('explorer'), () => {})).text).toBe('ok');
    expect(() => new AnthropicModelClient({ processRunner: runner, sandboxAvailable: false })).toThrow(
      /ANTHROPIC_API_KEY/,
    );
  });

  it('rethrows an error thrown by the event handler', async () => {
    await serve(() => ({ text: 'some text to stream' }));
    const boom = new Error('handler failed');
    await expect(
      client().runAgent(request('explorer'), () => {
        throw boom;
      }),
    ).rejects.toBe(boom);
  });
});
