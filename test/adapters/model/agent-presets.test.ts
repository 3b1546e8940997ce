import { readFileSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CliAgentClient } from '../../../src/adapters/model/cli-agent.js';
import { ExecaRunner } from '../../../src/adapters/sandbox/execa-runner.js';
import { PRESETS } from '../../../src/adapters/model/agent-presets/index.js';
import { AgentSetupError, GateError, RateLimitError } from '../../../src/domain/errors.js';
import type { Usage } from '../../../src/domain/types.js';
import type { AgentEvent, AgentPresetName, AgentRequest } from '../../../src/ports/model.js';
import { VERDICT_SCHEMA } from '../../../src/core/roles/prompts.js';
import { git, makeRepo } from '../../helpers/git-repo.js';
import { FIXTURES } from '../../helpers/paths.js';

/**
 * The preset path of the CLI agent client, with a fake `claude` (a shell script replaying recorded
 * stream-json) named by `bin:`. Unsandboxed here; the sandboxed path runs the real CLI in
 * test/integration/claude-code-agent.test.ts.
 */

const line = (o: unknown) => JSON.stringify(o);
const msg = (id: string, usage: Record<string, number>, content: unknown[]) =>
  line({ type: 'assistant', message: { id, model: 'claude-sonnet-5-5', content, usage } });
const RESULT = {
  type: 'result',
  subtype: 'success',
  is_error: false,
  result: 'All done.',
  usage: { input_tokens: 30, output_tokens: 70, cache_creation_input_tokens: 1200, cache_read_input_tokens: 5000 },
  total_cost_usd: 0.0123,
  modelUsage: {
    'claude-haiku-4-5': { outputTokens: 5, costUSD: 0.0001 },
    'claude-sonnet-5-5': { outputTokens: 65, costUSD: 0.0122 },
  },
  permission_denials: [],
};

const MODES: Record<string, string> = {
  stream: [
    line({ type: 'system', subtype: 'init', model: 'claude-sonnet-5-5' }),
    msg('m1', { input_tokens: 10, output_tokens: 1, cache_creation_input_tokens: 1200 }, [
      { type: 'text', text: 'Reading.' },
    ]),
    msg('m1', { input_tokens: 10, output_tokens: 1, cache_creation_input_tokens: 1200 }, [
      { type: 'tool_use', id: 't1', name: 'Read', input: { file_path: 'a' } },
    ]),
    line({ type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: 't1', content: 'file text' }] } }),
    msg('m2', { input_tokens: 20, output_tokens: 1, cache_read_input_tokens: 5000 }, [{ type: 'text', text: 'Done.' }]),
    line(RESULT),
  ].join('\n'),
  denied: line({ ...RESULT, permission_denials: [{ tool_name: 'Edit', tool_use_id: 'x', tool_input: {} }] }),
  // opencode 1.18.33 `run --format json` against the loopback server, recorded (the last line's figures abridged)
  opencode: readFileSync(path.join(FIXTURES, 'opencode-run.jsonl'), 'utf8').trim(),
  // Gemini CLI stream-json, shaped as @google/gemini-cli 0.61.0 emits it (the real CLI runs in test/integration/gemini-agent.test.ts)
  gemini: [
    line({ type: 'init', timestamp: 't', session_id: 's', model: 'gemini-3-pro' }),
    line({ type: 'message', timestamp: 't', role: 'user', content: 'Do the task.' }),
    line({ type: 'message', timestamp: 't', role: 'assistant', content: 'Writing ', delta: true }),
    line({
      type: 'tool_use',
      timestamp: 't',
      tool_name: 'write_file',
      tool_id: 'c1',
      parameters: { file_path: 'a.txt', content: 'x' },
    }),
    line({ type: 'tool_result', timestamp: 't', tool_id: 'c1', status: 'success', output: 'wrote a.txt' }),
    line({ type: 'message', timestamp: 't', role: 'assistant', content: 'done.', delta: true }),
    line({
      type: 'result',
      timestamp: 't',
      status: 'success',
      stats: {
        total_tokens: 1500,
        input_tokens: 1400,
        output_tokens: 100,
        cached: 1000,
        input: 400,
        duration_ms: 5,
        tool_calls: 1,
        models: { 'gemini-3-pro': { output_tokens: 100 } },
      },
    }),
  ].join('\n'),
  // Claude Code 2.1.332 with --json-schema: the answer the StructuredOutput tool took, beside the last text
  verdict: line({
    ...RESULT,
    result: 'I think it is fine.',
    structured_output: { pass: false, reasons: ['a.ts: the loop never ends'] },
  }),
  limit: line({
    type: 'result',
    subtype: 'success',
    is_error: true,
    result: 'Claude AI usage limit reached · resets 5am (UTC)',
    usage: RESULT.usage,
    total_cost_usd: 0,
  }),
};

const FAKE = String.raw`#!/bin/sh
cat > /dev/null
printf '%s\n' "$*" > "$FAKE_DIR/argv"
env > "$FAKE_DIR/env"
case "$FAKE_MODE" in
  login) echo 'Invalid API key · Please run /login'; exit 1 ;;
  write) echo changed > tracked.txt; echo new > intruder.txt; printf '%s\n' "$FAKE_OUT" ;;
  slow) printf '%s\n' "$FAKE_OUT" | head -n 2; sleep 20 ;;
  schema)
    while [ $# -gt 0 ]; do [ "$1" = --output-schema ] && cp "$2" "$FAKE_DIR/schema"; shift; done
    printf '%s\n' "$FAKE_OUT" ;;
  *) printf '%s\n' "$FAKE_OUT" ;;
esac
`;

let root: string;
let cleanup: () => Promise<void>;
let fakeDir: string;
let bin: string;
beforeEach(async () => {
  ({ root, cleanup } = await makeRepo({ 'tracked.txt': 'original\n' }));
  fakeDir = await mkdtemp(path.join(os.tmpdir(), 'lf-fake-claude-'));
  bin = path.join(fakeDir, 'claude');
  await writeFile(bin, FAKE);
  await chmod(bin, 0o755);
});
afterEach(async () => {
  await cleanup();
  await rm(fakeDir, { recursive: true, force: true });
});

function request(
  mode: string,
  over: Partial<AgentRequest> = {},
  preset: AgentPresetName = 'claude-code',
): AgentRequest {
  return {
    role: 'implementer',
    model: 'claude-sonnet-5-5',
    system: 'You are the implementer.',
    prompt: 'Do the task.',
    workdir: root,
    access: 'write',
    shell: true,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      FAKE_MODE: mode,
      FAKE_OUT: MODES[mode === 'write' || mode === 'slow' || mode === 'schema' ? 'stream' : mode] ?? '',
      FAKE_DIR: fakeDir,
    },
    maxTurns: 7,
    maxTokens: 1000,
    signal: new AbortController().signal,
    beforeCall: () => {},
    agent: { preset, bin },
    timeoutMs: 30_000,
    ...over,
  };
}

const HOST_ENV = {
  HOME: '/nonexistent-home',
  PATH: '/usr/bin:/bin',
  ANTHROPIC_API_KEY: 'sk-ant-host',
  OPENAI_API_KEY: 'sk-openai-host',
  GITHUB_TOKEN: 'ghp_x',
};

function client(price: (m: string, u: Usage) => number | null = () => null) {
  return new CliAgentClient({
    processRunner: new ExecaRunner(),
    sandboxAvailable: false,
    hostEnv: HOST_ENV,
    priceUsd: price,
  });
}

function sum(events: AgentEvent[]) {
  const total = { input: 0, output: 0, cacheWrite: 0, cacheRead: 0 };
  let cost = 0;
  for (const e of events) {
    if (e.type !== 'usage') continue;
    total.input += e.usage.input;
    total.output += e.usage.output;
    total.cacheWrite += e.usage.cacheWrite;
    total.cacheRead += e.usage.cacheRead;
    cost += e.costUsd ?? 0;
  }
  return { total, cost };
}

describe('claude-code preset', () => {
  it('runs claude in print mode with the role model, turns, system prompt and implementer permissions', async () => {
    await client().runAgent(request('stream'), () => {});
    const argv = await readFile(path.join(fakeDir, 'argv'), 'utf8');
    expect(argv).toContain('-p --output-format stream-json --verbose --model claude-sonnet-5-5 --max-turns 7');
    expect(argv).toContain('--append-system-prompt You are the implementer.');
    expect(argv).toContain(
      '--permission-mode acceptEdits --allowedTools Read,Glob,Grep,Edit,Write,NotebookEdit,Bash,TodoWrite',
    );
    expect(argv).not.toContain('dangerously');
    const env = await readFile(path.join(fakeDir, 'env'), 'utf8');
    // Its own credentials only; telemetry and other traffic off.
    expect(env).toContain('ANTHROPIC_API_KEY=sk-ant-host');
    expect(env).not.toContain('OPENAI_API_KEY');
    expect(env).not.toContain('GITHUB_TOKEN');
    expect(env).toContain('CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1');
    expect(env).toContain('HOME=/nonexistent-home');
  });

  it('gives read-only roles no writing tools', async () => {
    await client().runAgent(request('stream', { role: 'explorer', access: 'read-only', shell: false }), () => {});
    const argv = await readFile(path.join(fakeDir, 'argv'), 'utf8');
    expect(argv).toContain(
      '--allowedTools Read,Glob,Grep --disallowedTools Edit,Write,NotebookEdit,Bash,WebFetch,WebSearch',
    );
  });

  it('plays the reviewer read-only, with the verdict schema as its structured output, and answers with what that tool took', async () => {
    const reviewer = {
      role: 'verifier' as const,
      access: 'read-only' as const,
      shell: false,
      outputSchema: VERDICT_SCHEMA,
    };
    const result = await client().runAgent(request('verdict', reviewer), () => {});
    const argv = await readFile(path.join(fakeDir, 'argv'), 'utf8');
    expect(argv).toContain(`--json-schema ${JSON.stringify(VERDICT_SCHEMA)}`);
    expect(argv).toContain(
      '--permission-mode default --allowedTools Read,Glob,Grep --disallowedTools Edit,Write,NotebookEdit,Bash,WebFetch,WebSearch',
    );
    expect(JSON.parse(result.text)).toEqual({ pass: false, reasons: ['a.ts: the loop never ends'] });
    // without a schema (the other roles) the flag is not passed
    await client().runAgent(request('stream', { role: 'explorer', access: 'read-only', shell: false }), () => {});
    expect(await readFile(path.join(fakeDir, 'argv'), 'utf8')).not.toContain('--json-schema');
  });

  it('passes events on as they stream, usage once per model response, and ends on exactly the reported totals', async () => {
    const events: AgentEvent[] = [];
    let calls = 0;
    const result = await client(() => 0.001).runAgent(request('stream', { beforeCall: () => void calls++ }), (e) =>
      events.push(e),
    );
    expect(result.text).toBe('All done.');
    expect(result.reportedCostUsd).toBe(0.0123);
    expect(events.filter((e) => e.type !== 'usage').map((e) => e.type)).toEqual([
      'text',
      'tool',
      'tool-result',
      'text',
    ]);
    expect(events.find((e) => e.type === 'tool-result')).toMatchObject({
      name: 'Read',
      output: 'file text',
      isError: false,
    });
    // live: one usage per new response (m1, m2), then the correction to the totals
    const usages = events.filter((e) => e.type === 'usage');
    expect(usages[0]).toMatchObject({
      usage: { input: 10, output: 1, cacheWrite: 1200, cacheRead: 0 },
      costUsd: 0.001,
    });
    const { total, cost } = sum(events);
    expect(total).toEqual({ input: 30, output: 70, cacheWrite: 1200, cacheRead: 5000 });
    expect(cost).toBeCloseTo(0.0123, 10);
    // the model that did the work is the one that cost the most
    expect(usages.at(-1)).toMatchObject({ model: 'claude-sonnet-5-5' });
    // the gates were asked before the run and before each new model response
    expect(calls).toBe(3);
  });

  it('stops mid-run when a gate trips on streamed usage: the process is killed, the tokens so far counted', async () => {
    const events: AgentEvent[] = [];
    const gate = new GateError('tokens', 'task', 'token gate');
    const started = performance.now();
    const run = client().runAgent(request('slow'), (e) => {
      events.push(e);
      if (e.type === 'usage') throw gate;
    });
    await expect(run).rejects.toBe(gate);
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(sum(events).total.cacheWrite).toBe(1200);
  });

  it('fails a read-only role whose run changed the worktree, and resets the change', async () => {
    const run = client().runAgent(request('write', { role: 'explorer', access: 'read-only', shell: false }), () => {});
    await expect(run).rejects.toThrow(
      /explorer is read-only but its claude-code run changed the worktree \((intruder|tracked)\.txt, (intruder|tracked)\.txt\); the change was reset/,
    );
    await expect(run).rejects.toBeInstanceOf(AgentSetupError);
    expect(await readFile(path.join(root, 'tracked.txt'), 'utf8')).toBe('original\n');
    await expect(readFile(path.join(root, 'intruder.txt'), 'utf8')).rejects.toThrow(/ENOENT/);
    expect(await git(root, 'status', '--porcelain')).toBe('');
  });

  it('lets the implementer change the worktree', async () => {
    await client().runAgent(request('write'), () => {});
    expect(await readFile(path.join(root, 'intruder.txt'), 'utf8')).toBe('new\n');
  });

  it('says what to do when not logged in, when tools were denied, and when the binary is missing', async () => {
    await expect(client().runAgent(request('login'), () => {})).rejects.toThrow(
      /claude-code is not logged in: run `claude \/login`, or set ANTHROPIC_API_KEY/,
    );
    await expect(client().runAgent(request('denied'), () => {})).rejects.toThrow(
      /claude-code refused tools the implementer needs: Edit/,
    );
    const missing = client().runAgent(
      request('stream', { agent: { preset: 'claude-code', bin: '/nowhere/claude' } }),
      () => {},
    );
    await expect(missing).rejects.toThrow(
      /bin: \/nowhere\/claude is not an executable file; install @anthropic-ai\/claude-code .* or set bin: in agents\/implementer.md/,
    );
    const offPath = client().runAgent(request('stream', { agent: { preset: 'claude-code' } }), () => {});
    await expect(offPath).rejects.toThrow(/`claude` is not on PATH/);
  });

  it('turns a usage limit into a RateLimitError carrying the reset time', async () => {
    const error = await client()
      .runAgent(request('limit'), () => {})
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    const resetAt = (error as RateLimitError).resetAt!;
    expect(resetAt).toBeGreaterThan(Date.now());
    expect(resetAt - Date.now()).toBeLessThanOrEqual(24 * 3600_000);
    expect(new Date(resetAt).getHours()).toBe(5);
    expect((error as RateLimitError).kind).toBe('usage');
  });
});

describe('opencode preset, its recorded output replayed', () => {
  it("passes tool calls, results and per-step usage with opencode's own cost on as they come", async () => {
    const events: AgentEvent[] = [];
    const result = await client(() => 99).runAgent(request('opencode', {}, 'opencode'), (e) => events.push(e));
    expect(result.text).toBe('done');
    expect(result.reportedCostUsd).toBeCloseTo(0.0273375 + 0.0025326 + 0.0004, 10);
    expect(events.filter((e) => e.type !== 'usage').map((e) => `${e.type}:${'name' in e ? e.name : ''}`)).toEqual([
      'tool:write',
      'tool-result:write',
      'tool:bash',
      'tool-result:bash',
      'text:',
    ]);
    const { total, cost } = sum(events);
    expect(total).toEqual({ input: 0, output: 25, cacheWrite: 7326, cacheRead: 14534 });
    // opencode's figure, not the table's (99 a call here)
    expect(cost).toBeCloseTo(0.0302701, 10);
    expect(events.filter((e) => e.type === 'usage')).toHaveLength(3);
    const argv = await readFile(path.join(fakeDir, 'argv'), 'utf8');
    expect(argv.trim()).toBe('run --format json --model anthropic/claude-sonnet-5-5');
    const env = await readFile(path.join(fakeDir, 'env'), 'utf8');
    expect(env).toContain('OPENCODE_CONFIG_CONTENT=');
  });
});

describe('gemini preset', () => {
  it('reads its stream-json: text, tool calls with results, the totals with the cached part split out', async () => {
    const events: AgentEvent[] = [];
    const result = await client().runAgent(request('gemini', {}, 'gemini'), (e) => events.push(e));
    expect(result.text).toBe('Writing done.');
    expect(events.filter((e) => e.type !== 'usage').map((e) => e.type)).toEqual([
      'text',
      'tool',
      'tool-result',
      'text',
    ]);
    expect(events.find((e) => e.type === 'tool-result')).toMatchObject({
      name: 'write_file',
      output: 'wrote a.txt',
      isError: false,
    });
    expect(sum(events).total).toEqual({ input: 400, output: 100, cacheWrite: 0, cacheRead: 1000 });
    expect(events.find((e) => e.type === 'usage')).toMatchObject({ model: 'gemini-3-pro' });
  });
});

describe('the other presets', () => {
  it('build their non-interactive, machine-readable command lines with the right permissions', () => {
    const req = request('stream');
    const ro = { ...req, access: 'read-only' as const };
    expect(PRESETS.codex.build(req, 'codex', {}, false, '/scratch').argv).toEqual([
      'codex',
      'exec',
      '--json',
      '--skip-git-repo-check',
      '--sandbox',
      'workspace-write',
      '--model',
      'claude-sonnet-5-5',
      '-',
    ]);
    expect(PRESETS.codex.build(ro, 'codex', {}, false, '/scratch').argv).toContain('read-only');
    expect(PRESETS.gemini.build(req, 'gemini', {}, false, '/scratch').argv).toEqual(
      expect.arrayContaining(['--output-format', 'stream-json', '--approval-mode', 'yolo', '--skip-trust']),
    );
    expect(PRESETS.gemini.build(ro, 'gemini', {}, false, '/scratch').argv).toEqual(
      expect.arrayContaining(['--approval-mode', 'plan']),
    );
    const oc = PRESETS.opencode.build(ro, 'opencode', {}, false, '/scratch');
    expect(oc.argv).toEqual(['opencode', 'run', '--format', 'json', '--model', 'anthropic/claude-sonnet-5-5']);
    expect(JSON.parse(oc.env.OPENCODE_CONFIG_CONTENT!)).toMatchObject({
      permission: { edit: 'deny', bash: 'deny', webfetch: 'deny' },
    });
    expect(PRESETS.codex.credentialEnv.test('OPENAI_API_KEY')).toBe(true);
    expect(PRESETS.codex.credentialEnv.test('ANTHROPIC_API_KEY')).toBe(false);
    expect(PRESETS.gemini.credentialEnv.test('GOOGLE_API_KEY')).toBe(true);
  });
});

describe('codex as the reviewer', () => {
  it('runs read-only and gets the verdict schema as --output-schema, a file that exists for the run only', async () => {
    const reviewer = {
      role: 'verifier' as const,
      access: 'read-only' as const,
      shell: false,
      outputSchema: VERDICT_SCHEMA,
    };
    const invocation = PRESETS.codex.build({ ...request('stream'), ...reviewer }, 'codex', {}, true, '/scratch');
    expect(invocation.argv).toEqual([
      'codex',
      'exec',
      '--json',
      '--skip-git-repo-check',
      '--sandbox',
      'read-only',
      '--model',
      'claude-sonnet-5-5',
      '--output-schema',
      '/scratch/output-schema.json',
      '-',
    ]);
    expect(JSON.parse(invocation.files!['output-schema.json']!)).toEqual(VERDICT_SCHEMA);

    await client().runAgent(request('schema', { ...reviewer, agent: { preset: 'codex', bin } }), () => {});
    expect(JSON.parse(await readFile(path.join(fakeDir, 'schema'), 'utf8'))).toEqual(VERDICT_SCHEMA);
    const argv = (await readFile(path.join(fakeDir, 'argv'), 'utf8')).trim().split(' ');
    const file = argv[argv.indexOf('--output-schema') + 1]!;
    expect(path.isAbsolute(file)).toBe(true);
    await expect(readFile(file, 'utf8')).rejects.toThrow(/ENOENT/);
  });
});
