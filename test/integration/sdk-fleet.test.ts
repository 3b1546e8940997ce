import { chmod } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { overnight } from '../../src/commands/overnight.js';
import { findRepo } from '../../src/commands/repo.js';
import { openSession } from '../../src/commands/session.js';
import { startModelServer, type RunningModelServer } from '../../src/demo/model-server.js';
import type { Script } from '../../src/demo/script-types.js';
import { demoScript, type DemoScenario } from '../../src/demo/scripts.js';
import { totalTokens } from '../../src/domain/types.js';
import { backlog } from '../helpers/fleet-harness.js';
import { git, makeRepo } from '../helpers/git-repo.js';
import { readState } from '../helpers/state-file.js';

const KEY = 'sk-ant-test-key-for-the-loopback-server-000000';
let servers: RunningModelServer[] = [];
let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const s of servers) await s.close();
  for (const c of cleanups) await c();
  servers = [];
  cleanups = [];
});

async function setup(front: string, items: string, script: Script, files: Record<string, string> = {}) {
  const server = await startModelServer({ apiKeys: [KEY], script });
  servers.push(server);
  const r = await makeRepo({ 'BACKLOG.md': backlog(front, items), ...files });
  cleanups.push(r.cleanup);
  const env = { ...process.env, ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: KEY };
  return { root: r.root, server, env, repo: await findRepo(r.root) };
}

const pass = (taskId: string, path = `${taskId}.txt`): DemoScenario => ({
  taskId,
  kind: 'pass',
  edits: [{ path, content: `${taskId}\n` }],
});

/** Sum of what the server reported (streamed usage, also of cut streams), per kind. */
function reported(server: RunningModelServer) {
  let input = 0,
    output = 0,
    cacheWrite = 0,
    cacheRead = 0;
  for (const r of server.requests) {
    if (r.usage === null) continue;
    input += r.usage.input_tokens;
    output += r.usage.output_tokens;
    cacheWrite += r.usage.cache_creation_input_tokens;
    cacheRead += r.usage.cache_read_input_tokens;
  }
  return { input, output, cacheWrite, cacheRead };
}

describe('the fleet through the real SDK against the loopback Messages API', () => {
  it('rides out API faults within an attempt, fails an attempt (not the fleet) on a persistent error, and counts every streamed token', async () => {
    const base = demoScript([pass('T-1'), pass('T-2'), pass('T-3')]);
    let t3Cut = false;
    const script: Script = (req) => {
      // T-1: overloaded once, then fine (the SDK retries, honouring retry-after-ms)
      if (req.taskId === 'T-1' && req.role === 'explorer' && req.repeat === 0)
        return { fault: { status: 529, retryAfterMs: 5 } };
      // T-2: the implementer always gets a 500: each attempt fails with the API's message
      if (req.taskId === 'T-2' && req.role === 'implementer') return { fault: { status: 500, retryAfterMs: 1 } };
      // T-3: the first implementer stream is cut midway; the next attempt succeeds
      if (req.taskId === 'T-3' && req.role === 'implementer' && !t3Cut) {
        t3Cut = true;
        return {
          text: 'I will now write a long explanation of the change before making it.',
          fault: { type: 'cut', afterEvents: 4, mode: 'end' },
        };
      }
      return base(req);
    };
    const { server, env, repo } = await setup(
      'check: "true"\ngates:\n  attempts: 2',
      '- [ ] T-1 One\n- [ ] T-2 Two\n- [ ] T-3 Three',
      script,
    );
    const session = await openSession(repo, { overrides: {}, autoMerge: false, watch: false, env });
    session.fleet.start();
    await session.fleet.whenIdle();
    await session.close();
    const f = session.fleet;
    expect(f.task('T-1')!.status).toBe('verified');
    expect(f.task('T-3')!.status).toBe('verified');
    expect(f.task('T-3')!.attempts[0]!.outcome).toBe('error');
    const t2 = f.task('T-2')!;
    expect(t2.status).toBe('failed');
    expect(t2.attempts.every((a) => a.outcome === 'error')).toBe(true);
    expect(t2.attempts[0]!.reason).toMatch(/500/);
    expect(t2.attempts[0]!.reason).not.toContain(KEY);
    // Totals match what the API reported, to the token, cut stream included.
    const r = reported(server);
    expect(f.summary().totals.usage).toEqual(r);
    const perTask = f.tasks().reduce((s, t) => s + totalTokens(t.usage), 0);
    expect(perTask).toBe(r.input + r.output + r.cacheWrite + r.cacheRead);
    expect(r.cacheRead).toBeGreaterThan(0);
  });

  it('stops the run at the fleet cost gate and exits 1 naming it', async () => {
    const slow = demoScript([pass('T-1'), pass('T-2'), pass('T-3'), pass('T-4')], { chunkDelayMs: 2, delayMs: 5 });
    const { root, env, repo } = await setup(
      'check: "true"\nconcurrency: 1',
      '- [ ] T-1 One\n- [ ] T-2 Two\n- [ ] T-3 Three\n- [ ] T-4 Four',
      slow,
    );
    const lines: string[] = [];
    const code = await overnight(
      repo,
      { overrides: { fleetGates: { costUsd: 0.005 } }, autoMerge: false, watch: false, env },
      (l) => lines.push(l),
    );
    expect(code).toBe(1);
    expect(lines.join('\n')).toMatch(/fleet gate fleet_cost|gate fleet_cost/);
    const reports = await git(root, 'status', '--porcelain', '--ignored');
    expect(reports).toContain('.loop-worktrees');
    const statuses = (await readState(root)).tasks;
    expect(Object.values(statuses).some((t) => (t as { status: string }).status === 'queued')).toBe(true);
  });

  it('plays a role with a command-line agent that reads its prompt on stdin and reports usage and cost', async () => {
    const agent = `
      let input = '';
      process.stdin.on('data', (d) => (input += d));
      process.stdin.on('end', async () => {
        const fs = await import('node:fs');
        const task = /loopfleet-task: (\\S+)/.exec(input)?.[1] ?? 'none';
        fs.writeFileSync('from-cli-agent.txt', task + ' ' + process.env.LOOPFLEET_TASK_ID + ' ' + (process.env.ANTHROPIC_API_KEY ?? 'no-key') + '\\n');
        console.log(JSON.stringify({ type: 'result', result: 'wrote the file', usage: { input_tokens: 1200, output_tokens: 300, cache_creation_input_tokens: 0, cache_read_input_tokens: 800 }, total_cost_usd: 0.0421 }));
      });`;
    const { root, env, repo } = await setup(
      'check: test -f from-cli-agent.txt',
      '- [ ] T-1 Use the CLI agent',
      demoScript([pass('T-1', 'ignored.txt')]),
      {
        'agents/implementer.md': '---\nname: implementer\ncommand: node fake-agent.mjs\n---\nYou implement the task.\n',
        'fake-agent.mjs': agent,
      },
    );
    await chmod(join(root, 'fake-agent.mjs'), 0o755);
    await git(root, 'add', '-A');
    await git(root, 'commit', '-qm', 'agent');
    const session = await openSession(repo, { overrides: {}, autoMerge: false, watch: false, env });
    session.fleet.start();
    await session.fleet.whenIdle();
    await session.close();
    const t = session.fleet.task('T-1')!;
    expect(t.status).toBe('verified');
    expect(await git(root, 'show', 'loop/T-1:from-cli-agent.txt')).toBe('T-1 T-1 no-key');
    const a = t.attempts[0]!;
    expect(a.usageByRole.implementer).toEqual({ input: 1200, output: 300, cacheWrite: 0, cacheRead: 800 });
    expect(a.costByRole.implementer).toBeCloseTo(0.0421, 10);
  });

  it('uses per-role models: an agent file wins over the task, the task over the front matter', async () => {
    const { server, env, repo } = await setup(
      'check: "true"\nmodel: claude-sonnet-5-5',
      '- [ ] T-1 One\n  model: claude-opus-5-5',
      demoScript([pass('T-1')]),
      {
        'agents/verifier.md':
          '---\nname: verifier\nmodel: claude-haiku-4-5\n---\nReview the diff. Answer only with JSON {"pass": boolean, "reasons": [string]}.\n',
      },
    );
    const session = await openSession(repo, { overrides: {}, autoMerge: false, watch: false, env });
    session.fleet.start();
    await session.fleet.whenIdle();
    await session.close();
    const models = new Map(server.requests.map((r) => [(r.body as { system?: unknown; model: string }).model, true]));
    expect([...models.keys()].sort()).toEqual(['claude-haiku-4-5', 'claude-opus-5-5']);
    expect(session.fleet.task('T-1')!.status).toBe('verified');
  });
});
