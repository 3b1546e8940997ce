import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CliAgentClient } from '../../src/adapters/cli-agent.js';
import { ExecaRunner } from '../../src/adapters/execa-runner.js';
import { startModelServer } from '../../src/demo/model-server.js';
import type { AgentEvent, AgentRequest } from '../../src/ports/model.js';
import { makeRepo } from '../helpers/git-repo.js';

/**
 * The real opencode (the pinned opencode-ai) plays the implementer through `agent: opencode`, sandboxed,
 * against the loopback Messages server (its Anthropic provider pointed there from ANTHROPIC_BASE_URL), with
 * its key only in loopfleet's environment. opencode starts slowly (15-30 s a run on a busy machine), so
 * this is one run; its output shapes are also covered by a replayed recording in test/adapters.
 */

const OPENCODE = path.resolve('node_modules/.bin/opencode');
let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

describe('opencode as the implementer', () => {
  it('writes with its own tool inside the sandbox and reports its tokens and cost per step', async () => {
    const server = await startModelServer({
      apiKeys: ['sk-ant-opencode-test'],
      script: (req) => {
        if (req.tools.length === 0) return { text: 'A title' }; // its title side request, on a small model
        if (req.assistantTurns === 0) return { toolUses: [{ name: 'write', input: { filePath: 'made.txt', content: 'by opencode\n' } }] };
        return { text: 'Wrote made.txt.' };
      },
    });
    cleanups.push(() => server.close());
    const home = await mkdtemp(path.join(os.tmpdir(), 'lf-opencode-home-'));
    cleanups.push(() => rm(home, { recursive: true, force: true }));
    const repo = await makeRepo({ 'README.md': 'x\n' });
    cleanups.push(repo.cleanup);
    const client = new CliAgentClient({
      processRunner: new ExecaRunner(),
      sandboxAvailable: true,
      hostEnv: { PATH: process.env.PATH, HOME: home, ANTHROPIC_API_KEY: 'sk-ant-opencode-test', ANTHROPIC_BASE_URL: server.url },
    });
    const request: AgentRequest = {
      role: 'implementer',
      model: 'claude-sonnet-4-5',
      system: 'You are the implementer.',
      prompt: 'Do it.',
      workdir: repo.root,
      access: 'write',
      shell: true,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      maxTurns: 5,
      maxTokens: 1000,
      signal: new AbortController().signal,
      beforeCall: () => {},
      agent: { preset: 'opencode', bin: OPENCODE },
      timeoutMs: 100_000,
    };
    const events: AgentEvent[] = [];
    const result = await client.runAgent(request, (e) => events.push(e));
    expect(result.text).toBe('Wrote made.txt.');
    expect(await readFile(path.join(repo.root, 'made.txt'), 'utf8')).toBe('by opencode\n');
    expect(events.find((e) => e.type === 'tool-result')).toMatchObject({ name: 'write', isError: false });
    const usages = events.filter((e) => e.type === 'usage');
    expect(usages).toHaveLength(2); // one per step, as they happened
    expect(usages.every((e) => (e.costUsd ?? 0) > 0)).toBe(true);
  }, 120_000);
});
