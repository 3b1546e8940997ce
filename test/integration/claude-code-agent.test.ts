import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findRepo } from '../../src/commands/repo.js';
import { openSession } from '../../src/commands/session.js';
import { costOf, priceOf } from '../../src/core/budget/pricing.js';
import { claudeCodeRole, workdirOf, type ToolOutcome } from '../../src/demo/claude-code-script.js';
import { startModelServer, type RunningModelServer } from '../../src/demo/model-server.js';
import { byRole } from '../../src/demo/script-kit.js';
import type { Script, ScriptRequest, ToolResultSeen } from '../../src/demo/script-types.js';
import { demoScript } from '../../src/demo/scripts.js';
import { ExecaRunner } from '../../src/adapters/sandbox/execa-runner.js';
import { backlog } from '../helpers/fleet-harness.js';
import { git, makeRepo } from '../helpers/git-repo.js';

/**
 * The real Claude Code (the pinned @anthropic-ai/claude-code) plays the explorer and the implementer, and
 * then the reviewer, through `agent: claude-code`, against the loopback model server, sandboxed, with its key
 * only in loopfleet's environment.
 */

const CLAUDE = path.resolve('node_modules/.bin/claude');
const KEY = 'sk-ant-test-key-for-claude-code-000000';
const MODEL = 'claude-opus-5-5';

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

/** A second loopback service the agent must not reach; counts the connections it gets. */
async function bystander(): Promise<{ port: number; hits: () => number }> {
  let hits = 0;
  const server = net.createServer((s) => {
    hits += 1;
    s.end('HTTP/1.1 200 OK\r\ncontent-length: 6\r\n\r\nreach!');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { port: (server.address() as net.AddressInfo).port, hits: () => hits };
}

/** A repository of `files` run to idle by a real session, with the CLI's HOME in a fresh folder and `server` as its API. */
async function runWithClaude(server: RunningModelServer, files: Record<string, string>) {
  const home = await mkdtemp(path.join(os.tmpdir(), 'lf-home-'));
  cleanups.push(() => rm(home, { recursive: true, force: true }));
  const r = await makeRepo(files);
  cleanups.push(r.cleanup);
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    ANTHROPIC_BASE_URL: server.url,
    ANTHROPIC_API_KEY: KEY,
  };
  const session = await openSession(await findRepo(r.root), { overrides: {}, autoMerge: false, watch: false, env });
  session.fleet.start();
  await session.fleet.whenIdle();
  await session.close();
  return { r, session };
}

function roleFile(role: string): string {
  return `---\nname: ${role}\nagent: claude-code\nbin: ${CLAUDE}\nmodel: ${MODEL}\nmax_turns: 12\n---\nYou are the ${role} of this task.\n`;
}

describe('Claude Code as the explorer and the implementer', () => {
  it('edits with its own tools inside the sandbox, reaches its model and nothing else, and reports its own tokens and cost', async () => {
    expect(await new ExecaRunner().sandboxAvailable()).toBe(true);
    const other = await bystander();
    const explorerSaw: ToolOutcome[] = [];
    const implementerSaw: ToolOutcome[] = [];
    const direct = `(exec 3<>/dev/tcp/127.0.0.1/${other.port} && echo CONNECTED) 2>&1 || echo REFUSED`;
    const viaProxy = `exec 3<>/dev/tcp/127.0.0.1/3128; printf 'CONNECT 127.0.0.1:${other.port} HTTP/1.1\\r\\n\\r\\n' >&3; head -c 12 <&3`;
    const server: RunningModelServer = await startModelServer({
      apiKeys: [KEY],
      script: byRole({
        explorer: claudeCodeRole(
          {
            steps: [
              { tool: 'Read', path: 'greeting.txt' },
              { tool: 'Write', path: 'EXPLORER.txt', content: 'written by the explorer\n' },
            ],
            final: 'Plan: change hi to hello in greeting.txt and add notes.txt.',
          },
          explorerSaw,
        ),
        implementer: claudeCodeRole(
          {
            think: true,
            steps: [
              { tool: 'Read', path: 'greeting.txt' },
              { tool: 'Edit', path: 'greeting.txt', oldString: 'hi', newString: 'hello' },
              { tool: 'Write', path: 'notes.txt', content: 'made by Claude Code\n' },
              { tool: 'Bash', command: direct },
              { tool: 'Bash', command: viaProxy },
            ],
            final: 'Done: greeting.txt says hello, notes.txt added.',
          },
          implementerSaw,
        ),
      }),
    });
    cleanups.push(() => server.close());
    const { r, session } = await runWithClaude(server, {
      'BACKLOG.md': backlog(
        // loopfleet's own price for the model is deliberately wrong: the cost must be the one Claude Code reports
        `check: "grep -qx hello greeting.txt && test -f notes.txt"\nreview: false\nmodel: ${MODEL}\nprices:\n  ${MODEL}:\n    input: 100\n    output: 100`,
        '- [ ] T-1 Say hello',
      ),
      'greeting.txt': 'hi\n',
      'agents/explorer.md': roleFile('explorer'),
      'agents/implementer.md': roleFile('implementer'),
    });

    const task = session.fleet.task('T-1')!;
    expect(task.reason ?? null).toBeNull();
    expect(task.status).toBe('verified');
    // The change on the branch is Claude Code's own Edit (after its Read) and Write.
    expect(await git(r.root, 'show', 'loop/T-1:greeting.txt')).toBe('hello');
    expect(await git(r.root, 'show', 'loop/T-1:notes.txt')).toBe('made by Claude Code');
    expect(implementerSaw.map((o) => [o.step.tool, o.result.isError])).toEqual([
      ['Read', false],
      ['Edit', false],
      ['Write', false],
      ['Bash', false],
      ['Bash', false],
    ]);
    // The explorer's write was refused by Claude Code, and nothing of it reached the branch.
    expect(explorerSaw[1]!.result.isError).toBe(true);
    await expect(git(r.root, 'show', 'loop/T-1:EXPLORER.txt')).rejects.toThrow();
    // The shell reached neither another loopback port nor, through the proxy, that port.
    expect(implementerSaw[3]!.result.content).toContain('REFUSED');
    expect(implementerSaw[4]!.result.content).toContain('403');
    expect(other.hits()).toBe(0);
    // Every request went through the model server, on Claude Code's beta surface.
    expect(
      server.requests
        .filter((q) => q.path === '/v1/messages')
        .every((q) => q.query === 'beta=true' && q.status === 200),
    ).toBe(true);
    // Tokens: what the server reported; cost: what Claude Code reported (its table, not the overridden one).
    const sum = { input: 0, output: 0, cacheWrite: 0, cacheRead: 0 };
    for (const q of server.requests) {
      if (q.usage === null) continue;
      sum.input += q.usage.input_tokens;
      sum.output += q.usage.output_tokens;
      sum.cacheWrite += q.usage.cache_creation_input_tokens;
      sum.cacheRead += q.usage.cache_read_input_tokens;
    }
    expect(task.usage).toEqual(sum);
    expect(task.costUsd).toBeCloseTo(costOf(sum, priceOf(MODEL)!), 6);
  }, 60_000);

  it('is stopped mid-run by a token gate on its streamed usage, with the tokens so far counted', async () => {
    const server: RunningModelServer = await startModelServer({
      apiKeys: [KEY],
      script: byRole({
        explorer: claudeCodeRole({
          steps: Array.from({ length: 8 }, () => ({ tool: 'Read' as const, path: 'greeting.txt' })),
          final: 'Plan.',
        }),
      }),
    });
    cleanups.push(() => server.close());
    const { session } = await runWithClaude(server, {
      'BACKLOG.md': backlog(
        `check: "true"\nreview: false\nmodel: ${MODEL}\ngates:\n  attempts: 1\n  tokens: 20k`,
        '- [ ] T-1 Say hello',
      ),
      'greeting.txt': 'hi\n',
      'agents/explorer.md': roleFile('explorer'),
      'agents/implementer.md': roleFile('implementer'),
    });
    const task = session.fleet.task('T-1')!;
    expect(task.status).toBe('failed');
    expect(task.reason).toMatch(/token/);
    // Stopped after the response that crossed the gate, long before the explorer's 9 turns.
    const calls = server.requests.filter((q) => q.path === '/v1/messages' && q.status === 200).length;
    expect(calls).toBeGreaterThanOrEqual(2);
    expect(calls).toBeLessThan(5);
    expect(task.usage.cacheWrite + task.usage.cacheRead + task.usage.input).toBeGreaterThanOrEqual(20_000);
  }, 60_000);
});

/**
 * The reviewer's side of the fake model, per task: a pass and a veto given through the StructuredOutput tool
 * that Claude Code offers for `--json-schema` (the veto after an attempt to write, which must be refused), and
 * a reviewer that answers in prose however often Claude Code insists on the tool.
 */
interface ReviewerSeen {
  tools: string[][];
  writeResult: ToolResultSeen | null;
}

function reviewerScript(seen: ReviewerSeen): Script {
  return (req: ScriptRequest) => {
    seen.tools.push(req.tools);
    const structured = req.tools.includes('StructuredOutput');
    const verdict = (pass: boolean, reasons: string[]) =>
      structured
        ? { text: 'Verdict.', toolUses: [{ name: 'StructuredOutput', input: { pass, reasons } }] }
        : { text: 'I have no way to give a structured verdict here.' };
    switch (req.taskId) {
      case 'T-1':
        return verdict(true, ['t1.txt says hello, as the task asks.']);
      case 'T-2': {
        if (req.assistantTurns === 0) {
          const workdir = workdirOf(req) ?? '/';
          return {
            text: 'Let me fix it myself.',
            toolUses: [
              { name: 'Write', input: { file_path: `${workdir}/t2.txt`, content: 'fixed by the reviewer\n' } },
            ],
          };
        }
        if (req.assistantTurns === 1 && req.repeat === 0) seen.writeResult = req.toolResults[0] ?? null;
        return verdict(false, ['t2.txt says "hullo", not "hello".', 'The change does not do the task.']);
      }
      default:
        return { text: 'Looks good to me! The change is small and does what the task asks.' };
    }
  };
}

describe('Claude Code as the reviewer', () => {
  it('passes a good change, vetoes a bad one with its reasons, and an answer that is not a verdict is no pass', async () => {
    const seen: ReviewerSeen = { tools: [], writeResult: null };
    const api = demoScript(
      [
        { taskId: 'T-1', kind: 'pass', edits: [{ path: 't1.txt', content: 'hello\n' }] },
        { taskId: 'T-2', kind: 'pass', edits: [{ path: 't2.txt', content: 'hullo\n' }] },
        { taskId: 'T-3', kind: 'pass', edits: [{ path: 't3.txt', content: 'hello\n' }] },
      ],
      { chunkDelayMs: 0, delayMs: 0 },
    );
    // The explorer and the implementer are API roles (fast); the reviewer is the real Claude Code.
    const server = await startModelServer({
      apiKeys: [KEY],
      script: byRole({ explorer: api, implementer: api, verifier: reviewerScript(seen) }),
    });
    cleanups.push(() => server.close());
    const { r, session } = await runWithClaude(server, {
      'BACKLOG.md': backlog(
        `check: "true"\nreview: true\nmodel: ${MODEL}\ngates:\n  attempts: 1`,
        '- [ ] T-1 Write hello to t1.txt\n- [ ] T-2 Write hello to t2.txt\n- [ ] T-3 Write hello to t3.txt',
      ),
      'agents/verifier.md': roleFile('verifier'),
    });

    // Claude Code was given the verdict schema (it offered its StructuredOutput tool) and no writing tool.
    expect(seen.tools.length).toBeGreaterThan(0);
    for (const tools of seen.tools) {
      expect(tools).toContain('StructuredOutput');
      for (const writing of ['Edit', 'Write', 'NotebookEdit', 'Bash']) expect(tools).not.toContain(writing);
    }

    const t1 = session.fleet.task('T-1')!;
    expect(t1.reason ?? null).toBeNull();
    expect(t1.status).toBe('verified');
    expect(t1.attempts[0]!.verdict).toEqual({ pass: true, reasons: ['t1.txt says hello, as the task asks.'] });

    const t2 = session.fleet.task('T-2')!;
    expect(t2.status).toBe('failed');
    expect(t2.attempts[0]!.outcome).toBe('vetoed');
    expect(t2.attempts[0]!.verdict).toEqual({
      pass: false,
      reasons: ['t2.txt says "hullo", not "hello".', 'The change does not do the task.'],
    });
    expect(t2.attempts[0]!.reason).toBe(
      'reviewer veto: t2.txt says "hullo", not "hello".; The change does not do the task.',
    );
    // The reviewer's write was refused by Claude Code, and the branch holds the implementer's change only.
    expect(seen.writeResult?.isError).toBe(true);
    expect(await git(r.root, 'show', 'loop/T-2:t2.txt')).toBe('hullo');

    const t3 = session.fleet.task('T-3')!;
    expect(t3.status).toBe('failed');
    expect(t3.attempts[0]!.outcome).toBe('vetoed');
    expect(t3.attempts[0]!.verdict!.pass).toBe(false);
    expect(t3.attempts[0]!.reason).toMatch(
      /^reviewer veto: the reviewer's answer was not a verdict .*: Looks good to me!/,
    );
  }, 60_000);
});
