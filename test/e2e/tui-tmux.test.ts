import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startModelServer, type RunningModelServer, type Script } from '../../src/demo/model-server.js';
import { demoScript, type DemoScenario } from '../../src/demo/scripts.js';
import { backlog } from '../helpers/fleet-harness.js';
import { git, makeRepo, read } from '../helpers/git-repo.js';
import { CLI, Terminal, row } from '../helpers/tmux-terminal.js';
import { readState } from '../helpers/state-file.js';

/**
 * The interactive view as a person uses it: the built CLI in a real terminal (tmux), keys typed into it,
 * the screen read back from the pane, and the repository checked with git afterwards.
 */

const KEY = 'sk-ant-tmux-e2e-0123456789abcdefghijklmnopqrstuvwxyz';

const hasTmux = spawnSync('tmux', ['-V']).status === 0;

const SCENARIOS: DemoScenario[] = [
  { taskId: 'T-1', kind: 'pass', edits: [{ path: 'hello.txt', content: 'hello\n' }] },
  { taskId: 'T-2', kind: 'pass', edits: [{ path: 'other.txt', content: 'other\n' }] },
];

const FRONT = 'check: test -f hello.txt || test -f other.txt\nreview: true\nconcurrency: 1\ngates:\n  attempts: 2';
const ITEMS = '- [ ] T-1 Say hello\n- [ ] T-2 Say something else';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

async function setup(
  script: Script,
  front = FRONT,
): Promise<{
  root: string;
  server: RunningModelServer;
  term: Terminal;
  env: Record<string, string>;
  exitFile: string;
}> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
  const { root, cleanup } = await makeRepo({ 'BACKLOG.md': backlog(front, ITEMS) });
  cleanups.push(cleanup);
  // Outside the repository, so the checkout stays exactly as git and loopfleet left it.
  const scratch = await mkdtemp(join(tmpdir(), 'loopfleet-tmux-'));
  cleanups.push(() => rm(scratch, { recursive: true, force: true }));
  const server = await startModelServer({ apiKeys: [KEY], script });
  cleanups.push(() => server.close());
  const term = new Terminal();
  cleanups.push(() => term.kill());
  return {
    root,
    server,
    term,
    env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: KEY },
    exitFile: join(scratch, 'exit-code'),
  };
}

async function state(
  root: string,
): Promise<{ tasks: Record<string, { status: string; attempts: Array<{ outcome: string }> }> }> {
  return await readState(root);
}

describe.skipIf(!hasTmux)('the interactive view in a real terminal (tmux)', () => {
  it('runs the backlog paced to one review, merges T-1 with m then y, and quits with q keeping state', {
    timeout: 120_000,
  }, async () => {
    const { root, term, env, exitFile } = await setup(
      demoScript(SCENARIOS, { chunkDelayMs: 5, delayMs: 20 }),
      `${FRONT}\nreview_capacity: 1`,
    );
    await term.start(root, env, exitFile);

    // One verified branch waits for a person: the fleet bar says so and T-2 does not start.
    const first = await term.waitFor(
      (s) => /T-1 ✔ verified/.test(s) && /waiting for review: 1 of 1/.test(s),
      'T-1 verified and the fleet waiting for review',
      60_000,
    );
    // The fleet bar names the repository and base; the footer lists the keys.
    expect(first).toMatch(/loopfleet \S+ → main/);
    expect(first).toMatch(/m merge .* q quit/);
    expect(row(first, 'T-1')).toMatch(/Say hello/);
    expect(row(first, 'T-2')).toMatch(/queued/);

    // T-1 is the first row and selected when the view opens; `g` selects the first row either way.
    await term.keys('g');
    await term.waitFor((s) => row(s, 'T-1').startsWith('› T-1'), 'T-1 selected');
    await term.keys('m');
    await term.waitFor(/\? Merge loop\/T-1 into main\? y\/n/, 'the merge question');
    // Nothing happens before the answer.
    expect(await git(root, 'log', '-1', '--format=%s', 'main')).toBe('initial');
    await term.keys('y');

    await term.waitFor((s) => /✓ merged/.test(row(s, 'T-1')), 'T-1 merged');
    await term.waitFor(/Merged loop\/T-1 into main/, 'the merge confirmation in the status line');
    // The merge made room: T-2 starts at once and is verified.
    await term.waitFor((s) => /✔ verified/.test(row(s, 'T-2')), 'T-2 verified after the merge', 60_000);
    expect(await git(root, 'log', '-1', '--format=%s', 'main')).toMatch(/^Merge loop\/T-1/);
    expect(await read(root, 'hello.txt')).toBe('hello\n');
    expect(await read(root, 'BACKLOG.md')).toContain('- [x] T-1 Say hello');
    expect(await git(root, 'branch', '--list', 'loop/T-1')).toBe('');

    await term.keys('q');
    // README: 0 when every task the run touched ended verified or merged.
    expect(await term.waitForExit()).toBe(0);
    // The alternate screen is left: the task list is gone from the terminal.
    expect(await term.screen()).not.toMatch(/T-1 ✓ merged/);

    const kept = await state(root);
    expect(kept.tasks['T-1']?.status).toBe('merged');
    expect(kept.tasks['T-2']?.status).toBe('verified');
    expect(existsSync(join(root, '.loop-worktrees', 'fleet.lock'))).toBe(false);
    expect(await git(root, 'rev-parse', '--verify', 'loop/T-2')).toMatch(/^[0-9a-f]{40}$/);
  });

  it('quit while T-2 runs, start again: T-2 resumes and is verified', { timeout: 120_000 }, async () => {
    // T-2's replies are slow in the first run so that q lands while it runs.
    const pacing = { slowT2: true };
    const base = demoScript(SCENARIOS, { chunkDelayMs: 5, delayMs: 20 });
    const script: Script = async (req) => {
      const turn = await base(req);
      return req.taskId === 'T-2' && pacing.slowT2 ? { ...turn, delayMs: 400, chunkDelayMs: 40 } : turn;
    };
    const { root, term, env, exitFile } = await setup(script);

    await term.start(root, env, exitFile);
    await term.waitFor(
      (s) => /✔ verified/.test(row(s, 'T-1')) && /▶ running/.test(row(s, 'T-2')),
      'T-1 verified while T-2 runs',
      60_000,
    );
    await term.keys('q');
    // T-2 was started by this run and did not finish: the run was interrupted.
    expect(await term.waitForExit()).toBe(130);

    // The interrupted attempt is kept and T-2 is queued for the next start.
    const stopped = await state(root);
    expect(stopped.tasks['T-1']?.status).toBe('verified');
    expect(stopped.tasks['T-2']?.status).toBe('queued');
    expect(stopped.tasks['T-2']?.attempts.map((a) => a.outcome)).toContain('interrupted');
    expect(existsSync(join(root, '.loop-worktrees', 'fleet.lock'))).toBe(false);

    pacing.slowT2 = false;
    await term.closeSession();
    await term.start(root, env, exitFile);
    const resumed = await term.waitFor(
      (s) => /✔ verified/.test(row(s, 'T-2')),
      'T-2 verified after the restart',
      60_000,
    );
    expect(row(resumed, 'T-1')).toMatch(/✔ verified/);

    // The attempt history of T-2 keeps the interrupted attempt.
    await term.keys('j');
    await term.waitFor((s) => row(s, 'T-2').startsWith('› T-2'), 'T-2 selected');
    await term.keys('Enter');
    await term.keys('6');
    const history = await term.waitFor(/^\s*1\s+interrupted\s/m, 'the interrupted attempt in the history tab');
    expect(history).toMatch(/^\s*1\s+verified\s/m);

    await term.keys('q');
    expect(await term.waitForExit()).toBe(0);
    const after = await state(root);
    expect(after.tasks['T-2']?.status).toBe('verified');
    expect(existsSync(join(root, '.loop-worktrees', 'fleet.lock'))).toBe(false);
  });
});
