import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AnthropicModelClient } from '../../src/adapters/model/anthropic-model.js';
import { attemptMarker, roleMarker, taskMarker } from '../../src/core/roles/marker.js';
import type { Role } from '../../src/domain/types.js';
import { startModelServer, type RunningModelServer } from '../../src/demo/model-server.js';
import { brokenEdit, demoScript, type DemoScenario } from '../../src/demo/scripts.js';
import type { AgentEvent, AgentRequest } from '../../src/ports/model.js';
import { RecordingRunner } from '../helpers/recording-runner.js';

const scenarios: DemoScenario[] = [
  { taskId: 'T-1', kind: 'pass', edits: [{ path: 'src/sum.js', content: 'export const sum = (a, b) => a + b;\n' }] },
  {
    taskId: 'T-2',
    kind: 'check-fails',
    edits: [{ path: 'src/mul.js', content: 'export const mul = (a, b) => a * b;\n' }],
  },
  {
    taskId: 'T-3',
    kind: 'veto',
    edits: [{ path: 'README.md', content: '# Demo\n' }],
    vetoReason: 'The readme lost its usage section.',
  },
  {
    taskId: 'T-4',
    kind: 'pass-second-attempt',
    edits: [{ path: 'src/div.js', content: 'export const div = (a, b) => a / b;\n' }],
    failingEdits: [{ path: 'src/div.js', content: 'export const div = (a, b) => a * b;\n' }],
  },
];

let server: RunningModelServer;
let dir: string;
let client: AnthropicModelClient;

beforeAll(async () => {
  server = await startModelServer({ script: demoScript(scenarios, { chunkDelayMs: 0, delayMs: 0 }) });
  client = new AnthropicModelClient({
    apiKey: 'demo-key',
    baseURL: server.url,
    processRunner: new RecordingRunner(),
    sandboxAvailable: false,
  });
});
afterAll(async () => {
  await server.close();
});
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'loopfleet-demo-'));
  await writeFile(join(dir, 'README.md'), '# Demo\n\n## Usage\n');
  return () => rm(dir, { recursive: true, force: true });
});

async function run(role: Role, taskId: string, attempt = 1) {
  const events: AgentEvent[] = [];
  const request: AgentRequest = {
    role,
    model: 'claude-sonnet-5-5',
    system: `Role definition.\n\n${roleMarker(role)}\n`,
    prompt: `${taskMarker(taskId)}\n${attemptMarker(attempt)}\n\n# Task ${taskId}`,
    workdir: dir,
    access: role === 'implementer' ? 'write' : 'read-only',
    shell: false,
    env: {},
    maxTurns: 10,
    maxTokens: 4096,
    signal: new AbortController().signal,
    beforeCall: () => {},
    timeoutMs: 30_000,
    ...(role === 'verifier' ? { outputSchema: { type: 'object' } } : {}),
  };
  const result = await client.runAgent(request, (e) => events.push(e));
  return { result, events };
}

describe('demo script', () => {
  it('explorer looks around once, then plans the scenario files', async () => {
    const { result, events } = await run('explorer', 'T-1');
    expect(events).toContainEqual({ type: 'tool', name: 'glob', input: '{"pattern":"**/*"}' });
    expect(result.text).toContain('Plan for T-1');
    expect(result.text).toContain('src/sum.js');
    expect(result.turns).toBe(2);
  });

  it('implementer reads, writes the scenario edits, and summarises', async () => {
    const { result, events } = await run('implementer', 'T-1');
    expect(await readFile(join(dir, 'src/sum.js'), 'utf8')).toBe(scenarios[0]!.edits[0]!.content);
    expect(events.filter((e) => e.type === 'tool').map((e) => (e as { name: string }).name)).toEqual(['read', 'write']);
    expect(result.text).toContain('src/sum.js');
    expect(result.turns).toBe(3);
  });

  it('check-fails writes a broken change on every attempt', async () => {
    for (const attempt of [1, 2, 3]) {
      await run('implementer', 'T-2', attempt);
      expect(await readFile(join(dir, 'src/mul.js'), 'utf8')).toBe(brokenEdit(scenarios[1]!.edits[0]!).content);
    }
    expect(brokenEdit({ path: 'a.js', content: 'x' }).content).toMatch(/^x\nthrow new Error/);
  });

  it('pass-second-attempt fails first, then writes the passing change', async () => {
    await run('implementer', 'T-4', 1);
    expect(await readFile(join(dir, 'src/div.js'), 'utf8')).toContain('a * b');
    await run('implementer', 'T-4', 2);
    expect(await readFile(join(dir, 'src/div.js'), 'utf8')).toContain('a / b');
  });

  it('verifier passes, or vetoes with the scenario reason', async () => {
    expect(JSON.parse((await run('verifier', 'T-1')).result.text)).toMatchObject({ pass: true });
    expect(JSON.parse((await run('verifier', 'T-3')).result.text)).toEqual({
      pass: false,
      reasons: ['The readme lost its usage section.'],
    });
    expect(JSON.parse((await run('verifier', 'T-99')).result.text)).toMatchObject({ pass: false });
  });

  it('streams text in several chunks', async () => {
    const { events } = await run('explorer', 'T-3');
    expect(events.filter((e) => e.type === 'text').length).toBeGreaterThan(3);
  });
});
