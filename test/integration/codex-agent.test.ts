import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CliAgentClient } from '../../src/adapters/model/cli-agent.js';
import { ExecaRunner } from '../../src/adapters/sandbox/execa-runner.js';
import { startResponsesServer } from '../../src/demo/responses-server.js';
import { VERDICT_SCHEMA } from '../../src/core/roles/prompts.js';
import { parseVerdict } from '../../src/core/verify/verdict.js';
import type { AgentEvent } from '../../src/ports/model.js';
import { makeRepo } from '../helpers/git-repo.js';
import { presetRequest } from '../helpers/preset-request.js';

/**
 * The real Codex CLI (the pinned @openai/codex) plays the implementer and the reviewer through `agent: codex`,
 * sandboxed, against the loopback fake of the Responses API, with its key only in loopfleet's environment.
 */

const CODEX = path.resolve('node_modules/.bin/codex');
let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

describe('Codex as the implementer', () => {
  it('runs its own shell tool in the worktree, reaches its model only, and reports its tokens', async () => {
    const outputs: string[] = [];
    const server = await startResponsesServer((req) => {
      outputs.push(...req.outputs);
      if (req.calls === 0)
        return {
          call: { name: 'exec_command', arguments: { cmd: 'echo made-by-codex > codex.txt && cat codex.txt' } },
        };
      return { text: 'Wrote codex.txt.' };
    }, 100);
    cleanups.push(() => server.close());
    const home = await mkdtemp(path.join(os.tmpdir(), 'lf-codex-home-'));
    cleanups.push(() => rm(home, { recursive: true, force: true }));
    const repo = await makeRepo({ 'README.md': 'x\n' });
    cleanups.push(repo.cleanup);
    const runner = new ExecaRunner();
    expect(await runner.sandboxAvailable()).toBe(true);
    const client = new CliAgentClient({
      processRunner: runner,
      sandboxAvailable: true,
      hostEnv: {
        PATH: process.env.PATH,
        HOME: home,
        OPENAI_API_KEY: 'sk-openai-test',
        OPENAI_BASE_URL: server.url,
        ANTHROPIC_API_KEY: 'sk-ant-not-for-codex',
      },
    });
    const events: AgentEvent[] = [];
    const request = presetRequest({ preset: 'codex', bin: CODEX }, 'implementer', {
      model: 'gpt-5.5',
      prompt: 'Write codex.txt.',
      workdir: repo.root,
    });
    const result = await client.runAgent(request, (e) => events.push(e));
    expect(result.text).toBe('Wrote codex.txt.');
    expect(await readFile(path.join(repo.root, 'codex.txt'), 'utf8')).toBe('made-by-codex\n');
    expect(events.some((e) => e.type === 'tool' && e.input.includes('echo made-by-codex > codex.txt'))).toBe(true);
    // tokens: what the server reported, the cached part split out
    const usage = events
      .filter((e) => e.type === 'usage')
      .reduce(
        (s, e) => ({
          input: s.input + e.usage.input,
          cacheRead: s.cacheRead + e.usage.cacheRead,
          output: s.output + e.usage.output,
        }),
        { input: 0, cacheRead: 0, output: 0 },
      );
    const served = server.requests.reduce(
      (s, q) => ({
        input: s.input + q.usage!.input - q.usage!.cached,
        cacheRead: s.cacheRead + q.usage!.cached,
        output: s.output + q.usage!.output,
      }),
      { input: 0, cacheRead: 0, output: 0 },
    );
    expect(usage).toEqual(served);
    expect(server.requests.every((q) => q.auth)).toBe(true);
  }, 60_000);
});

describe('Codex as the reviewer', () => {
  it('asks its model for the verdict schema (--output-schema) and answers with the verdict', async () => {
    const server = await startResponsesServer((req) => {
      const format = req.body.text?.format;
      // A model held to the schema answers with the verdict; one that is not, in prose.
      return format?.type === 'json_schema'
        ? { text: JSON.stringify({ pass: false, reasons: ['README.md: the task asked for a title, there is none.'] }) }
        : { text: 'Looks fine to me.' };
    });
    cleanups.push(() => server.close());
    const home = await mkdtemp(path.join(os.tmpdir(), 'lf-codex-home-'));
    cleanups.push(() => rm(home, { recursive: true, force: true }));
    const repo = await makeRepo({ 'README.md': 'x\n' });
    cleanups.push(repo.cleanup);
    const client = new CliAgentClient({
      processRunner: new ExecaRunner(),
      sandboxAvailable: true,
      hostEnv: { PATH: process.env.PATH, HOME: home, OPENAI_API_KEY: 'sk-openai-test', OPENAI_BASE_URL: server.url },
    });
    const result = await client.runAgent(
      presetRequest(
        { preset: 'codex', bin: CODEX },
        'verifier',
        { model: 'gpt-5.5', prompt: 'Review the change. Answer only with the JSON verdict.', workdir: repo.root },
        { outputSchema: VERDICT_SCHEMA },
      ),
      () => {},
    );
    const asked = server.requests.find((q) => q.path === '/v1/responses') as
      | { body: { text: { format: Record<string, unknown> } } }
      | undefined;
    expect(asked?.body.text.format).toMatchObject({ type: 'json_schema', schema: VERDICT_SCHEMA });
    expect(parseVerdict(result.text)).toEqual({
      pass: false,
      reasons: ['README.md: the task asked for a title, there is none.'],
    });
  }, 60_000);
});
