import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CliAgentClient } from '../../../src/adapters/model/cli-agent.js';
import { GateError } from '../../../src/domain/errors.js';
import type { AgentEvent, AgentRequest } from '../../../src/ports/model.js';
import { RecordingRunner } from '../../helpers/recording-runner.js';

/**
 * A fake command-line agent: reads its whole stdin, writes it to a file in the worktree, prints some
 * progress and then the output shape named by its first argument.
 */
const FAKE_AGENT = String.raw`
import { writeFileSync } from 'node:fs';
const mode = process.argv[2] ?? 'claude-json';
let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => (input += d));
process.stdin.on('end', async () => {
  writeFileSync('agent-stdin.txt', input);
  const out = (line) => process.stdout.write(line + '\n');
  if (mode === 'claude-json') {
    out('reading the task...');
    out(JSON.stringify({
      type: 'result', subtype: 'success', is_error: false, num_turns: 4, result: 'All done: wrote agent-stdin.txt',
      usage: { input_tokens: 120, output_tokens: 340, cache_creation_input_tokens: 2000, cache_read_input_tokens: 15000 },
      total_cost_usd: 0.0421,
      modelUsage: { 'claude-sonnet-5-5-20261015': { inputTokens: 120, outputTokens: 340 } },
    }));
  } else if (mode === 'stream-json') {
    out(JSON.stringify({ type: 'system', subtype: 'init', model: 'claude-sonnet-5-5' }));
    out(JSON.stringify({ type: 'assistant', message: { model: 'claude-sonnet-5-5', content: [{ type: 'text', text: 'Looking at it.' }, { type: 'tool_use', name: 'Read', input: { file_path: 'a.js' } }] } }));
    out(JSON.stringify({ type: 'user', message: { content: [{ type: 'tool_result', content: 'x' }] } }));
    out(JSON.stringify({ type: 'result', subtype: 'success', is_error: false, result: 'Finished.', usage: { input_tokens: 10, output_tokens: 20 }, total_cost_usd: 0.001 }));
  } else if (mode === 'codex') {
    out(JSON.stringify({ type: 'thread.started', thread_id: 't1' }));
    out(JSON.stringify({ type: 'turn.started' }));
    out(JSON.stringify({ type: 'item.completed', item: { id: 'i0', type: 'command_execution', command: 'ls', aggregated_output: 'a.js', status: 'completed' } }));
    out(JSON.stringify({ type: 'item.completed', item: { id: 'i1', type: 'agent_message', text: 'Codex finished the change.' } }));
    out(JSON.stringify({ type: 'turn.completed', usage: { input_tokens: 1200, cached_input_tokens: 200, output_tokens: 345 } }));
  } else if (mode === 'plain') {
    out('plain line one');
    process.stdout.write('no newline at the end');
  } else if (mode === 'fail') {
    for (let i = 0; i < 50; i++) out('noise ' + i);
    process.stderr.write('fatal: could not finish\n');
    process.exit(3);
  } else if (mode === 'claude-error') {
    out(JSON.stringify({ type: 'result', subtype: 'error_max_turns', is_error: true, result: 'hit the turn limit' }));
  } else if (mode === 'slow') {
    out('started');
    setTimeout(() => out('finished'), 60_000);
  }
});
`;

let dir: string;
let runner: RecordingRunner;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'loopfleet-cli-'));
  await writeFile(join(dir, 'agent.mjs'), FAKE_AGENT);
  runner = new RecordingRunner();
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function request(mode: string, over: Partial<AgentRequest> = {}): AgentRequest {
  return {
    role: 'implementer',
    model: 'claude-sonnet-5-5',
    system: 'You implement tasks.\nloopfleet-role: implementer',
    prompt: 'loopfleet-task: T-2\n\n# Task T-2',
    workdir: dir,
    access: 'write',
    shell: true,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LOOPFLEET_TASK_ID: 'T-2' },
    maxTurns: 10,
    maxTokens: 4096,
    signal: new AbortController().signal,
    beforeCall: () => {},
    command: `"${process.execPath}" agent.mjs ${mode}`,
    timeoutMs: 20_000,
    ...over,
  };
}

function sink() {
  const events: AgentEvent[] = [];
  return { events, onEvent: (e: AgentEvent) => events.push(e) };
}

describe('CliAgentClient', () => {
  it('runs the command in the worktree with the prompts on stdin and reads Claude Code JSON', async () => {
    const s = sink();
    const result = await new CliAgentClient({ processRunner: runner, sandboxAvailable: false }).runAgent(
      request('claude-json'),
      s.onEvent,
    );
    expect(result).toEqual({
      text: 'All done: wrote agent-stdin.txt',
      turns: 1,
      stopReason: 'end_turn',
      reportedCostUsd: 0.0421,
    });
    const stdin = await readFile(join(dir, 'agent-stdin.txt'), 'utf8');
    expect(stdin).toBe('You implement tasks.\nloopfleet-role: implementer\n\nloopfleet-task: T-2\n\n# Task T-2\n');
    expect(s.events).toContainEqual({ type: 'text', text: 'reading the task...\n' });
    expect(s.events.filter((e) => e.type === 'usage')).toEqual([
      {
        type: 'usage',
        model: 'claude-sonnet-5-5-20261015',
        usage: { input: 120, output: 340, cacheWrite: 2000, cacheRead: 15000 },
        costUsd: 0.0421,
      },
    ]);
    const [call] = runner.calls;
    expect(call!.options).toMatchObject({ cwd: dir, env: request('x').env, timeoutMs: 20_000, sandbox: null });
    expect(call!.options.signal).toBeInstanceOf(AbortSignal);
  });

  it('takes a limit beyond what a timer can hold as no limit', async () => {
    const result = await new CliAgentClient({ processRunner: runner, sandboxAvailable: false }).runAgent(
      request('claude-json', { timeoutMs: Number.MAX_SAFE_INTEGER }),
      () => {},
    );
    expect(result.text).toContain('All done');
    expect(runner.calls[0]!.options.timeoutMs).toBe(2 ** 31 - 1);
  });

  it('asks for the sandbox when one is available', async () => {
    await new CliAgentClient({ processRunner: runner, sandboxAvailable: true }).runAgent(
      request('claude-json'),
      () => {},
    );
    expect(runner.calls[0]!.options.sandbox).toEqual({ writable: [dir] });
  });

  it('streams Claude Code stream-json as text and tool events', async () => {
    const s = sink();
    const result = await new CliAgentClient({ processRunner: runner, sandboxAvailable: false }).runAgent(
      request('stream-json'),
      s.onEvent,
    );
    expect(result.text).toBe('Finished.');
    expect(result.reportedCostUsd).toBe(0.001);
    expect(s.events).toContainEqual({ type: 'text', text: 'Looking at it.' });
    expect(s.events).toContainEqual({ type: 'tool', name: 'Read', input: '{"file_path":"a.js"}' });
    expect(
      s.events
        .filter((e) => e.type === 'text')
        .map((e) => (e as { text: string }).text)
        .join(''),
    ).not.toContain('"type"');
    expect(s.events).toContainEqual({
      type: 'usage',
      model: 'claude-sonnet-5-5',
      usage: { input: 10, output: 20, cacheWrite: 0, cacheRead: 0 },
      costUsd: 0.001,
    });
  });

  it('reads codex --json events: the last agent message and the usage, cached input split out', async () => {
    const s = sink();
    const result = await new CliAgentClient({ processRunner: runner, sandboxAvailable: false }).runAgent(
      request('codex'),
      s.onEvent,
    );
    expect(result.text).toBe('Codex finished the change.');
    expect(result.reportedCostUsd).toBeUndefined();
    expect(s.events).toContainEqual({ type: 'tool', name: 'shell', input: 'ls' });
    expect(s.events).toContainEqual({
      type: 'usage',
      model: 'claude-sonnet-5-5',
      usage: { input: 1000, output: 345, cacheWrite: 0, cacheRead: 200 },
    });
  });

  it('passes plain output through as the answer, with no usage', async () => {
    const s = sink();
    const result = await new CliAgentClient({ processRunner: runner, sandboxAvailable: false }).runAgent(
      request('plain'),
      s.onEvent,
    );
    expect(result.text).toBe('plain line one\nno newline at the end');
    expect(s.events.map((e) => e.type)).toEqual(['text', 'text']);
  });

  it('throws with the output tail on a nonzero exit, and on a reported error', async () => {
    const client = new CliAgentClient({ processRunner: runner, sandboxAvailable: false });
    await expect(client.runAgent(request('fail'), () => {})).rejects.toThrow(
      /exited 3; last output:[\s\S]*fatal: could not finish/,
    );
    await expect(client.runAgent(request('claude-error'), () => {})).rejects.toThrow(/hit the turn limit/);
  });

  it('stops on abort with the reason, on timeout, and before running when beforeCall throws', async () => {
    const client = new CliAgentClient({ processRunner: runner, sandboxAvailable: false });
    const controller = new AbortController();
    const gate = new GateError('time', 'task', 'out of time');
    const run = client.runAgent(request('slow', { signal: controller.signal }), (e) => {
      if (e.type === 'text') controller.abort(gate);
    });
    await expect(run).rejects.toBe(gate);
    // The timeout counts from the spawn: long enough for a loaded machine to start node and print its first
    // line, which the message must carry; the agent itself would run a minute.
    await expect(client.runAgent(request('slow', { timeoutMs: 5_000 }), () => {})).rejects.toThrow(
      /timed out after 5s[\s\S]*started/,
    );
    const calls = runner.calls.length;
    const refused = new GateError('tokens', 'task', 'no tokens left');
    await expect(
      client.runAgent(
        request('claude-json', {
          beforeCall: () => {
            throw refused;
          },
        }),
        () => {},
      ),
    ).rejects.toBe(refused);
    expect(runner.calls).toHaveLength(calls);
  });

  it('puts back what a read-only command role changed and fails it, booking what it spent — also when it fails', async () => {
    const git = (...args: string[]) =>
      execa('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: dir });
    await git('init', '-q');
    await git('add', '-A');
    await git('commit', '-qm', 'base');
    const client = new CliAgentClient({ processRunner: runner, sandboxAvailable: false });
    const wrote = sink();
    await client.runAgent(request('claude-json'), wrote.onEvent);
    await rm(join(dir, 'agent-stdin.txt'));

    const s = sink();
    const explorer = request('claude-json', { role: 'explorer', access: 'read-only' });
    await expect(client.runAgent(explorer, s.onEvent)).rejects.toMatchObject({
      reason: 'read-only-violated',
      message: expect.stringContaining('the explorer is read-only but its command'),
    });
    expect(existsSync(join(dir, 'agent-stdin.txt'))).toBe(false);
    expect(s.events.map((e) => e.type)).toEqual(wrote.events.map((e) => e.type));
    await expect(
      client.runAgent(request('fail', { role: 'verifier', access: 'read-only' }), () => {}),
    ).rejects.toMatchObject({ reason: 'read-only-violated' });
    expect(existsSync(join(dir, 'agent-stdin.txt'))).toBe(false);
    expect((await git('status', '--porcelain')).stdout).toBe('');
  });
});
