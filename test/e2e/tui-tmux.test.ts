import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { startModelServer, type RunningModelServer, type Script } from '../../src/demo/model-server.js';
import { demoScript, type DemoScenario } from '../../src/demo/scripts.js';
import { backlog } from '../helpers/fleet-harness.js';
import { git, makeRepo, read } from '../helpers/git-repo.js';

/**
 * The interactive view as a person uses it: the built CLI in a real terminal (tmux), keys typed into it,
 * the screen read back from the pane, and the repository checked with git afterwards.
 */

const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli.js');
const KEY = 'sk-ant-tmux-e2e-0123456789abcdefghijklmnopqrstuvwxyz';
const COLUMNS = 120;
const ROWS = 35;
const SESSION = 'fleet';

const hasTmux = spawnSync('tmux', ['-V']).status === 0;

const SCENARIOS: DemoScenario[] = [
  { taskId: 'T-1', kind: 'pass', edits: [{ path: 'hello.txt', content: 'hello\n' }] },
  { taskId: 'T-2', kind: 'pass', edits: [{ path: 'other.txt', content: 'other\n' }] },
];

const BACKLOG = backlog(
  'check: test -f hello.txt || test -f other.txt\nreview: true\nconcurrency: 1\ngates:\n  attempts: 2',
  '- [ ] T-1 Say hello\n- [ ] T-2 Say something else',
);

/** The environment tmux itself runs with: none of the caller's tmux or credential variables. */
function tmuxEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (name === 'TMUX' || name === 'TMUX_PANE' || name.startsWith('ANTHROPIC_')) continue;
    env[name] = value;
  }
  return env;
}

/** One tmux server on its own socket, one session in it running the CLI. */
class Terminal {
  readonly socket = `loopfleet-e2e-${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  #exitFile = '';

  async tmux(...args: string[]): Promise<string> {
    const r = await execa('tmux', ['-L', this.socket, '-f', '/dev/null', ...args], { env: tmuxEnv(), extendEnv: false, timeout: 10_000 });
    return r.stdout;
  }

  /**
   * Starts the CLI in `cwd`. A shell around it writes its exit code to `exitFile`: tmux's own
   * `#{pane_dead_status}` can miss it (tmux built with libutempter resets SIGCHLD while a pane closes).
   * The pane stays after the process exits so the screen it leaves can be read.
   */
  async start(cwd: string, env: Record<string, string>, exitFile: string, args: string[] = []): Promise<void> {
    this.#exitFile = exitFile;
    await rm(exitFile, { force: true });
    const assignments = Object.entries({ TERM: 'xterm-256color', ...env }).map(([k, v]) => `${k}=${v}`);
    const command = ['env', '-u', 'ANTHROPIC_AUTH_TOKEN', '-u', 'NO_COLOR', ...assignments, process.execPath, CLI, ...args];
    await this.tmux(
      'new-session', '-d', '-s', SESSION, '-x', String(COLUMNS), '-y', String(ROWS), '-c', cwd,
      // several arguments: tmux runs them directly, with no shell of its own to quote for
      'sh', '-c', 'f=$1; shift; "$@"; echo $? > "$f.tmp"; mv "$f.tmp" "$f"', 'sh', exitFile, ...command,
      ';', 'set-option', '-p', '-t', SESSION, 'remain-on-exit', 'on',
    );
  }

  async screen(): Promise<string> {
    return this.tmux('capture-pane', '-p', '-t', SESSION);
  }

  /** Polls the screen until `test` matches it; fails with the last screen on screen. */
  async waitFor(test: RegExp | ((screen: string) => boolean), what: string, timeoutMs = 30_000): Promise<string> {
    const matches = typeof test === 'function' ? test : (s: string) => test.test(s);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const screen = await this.screen();
      if (matches(screen)) return screen;
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; the screen was:\n${screen}`);
      await sleep(200);
    }
  }

  async keys(...keys: string[]): Promise<void> {
    await this.tmux('send-keys', '-t', SESSION, ...keys);
  }

  /** The CLI's exit code, once it has exited. */
  async waitForExit(timeoutMs = 20_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const code = await readFile(this.#exitFile, 'utf8').catch(() => null);
      if (code !== null) return Number(code.trim());
      if (Date.now() > deadline) throw new Error(`the CLI did not exit within ${timeoutMs} ms; the screen was:\n${await this.screen()}`);
      await sleep(200);
    }
  }

  /** Ends the session (the server goes with its last session) so the next start gets a fresh one. */
  async closeSession(): Promise<void> {
    await this.tmux('kill-session', '-t', SESSION).catch(() => '');
  }

  /** Stops the server and removes its socket file, which tmux leaves behind. */
  async kill(): Promise<void> {
    await execa('tmux', ['-L', this.socket, 'kill-server'], { env: tmuxEnv(), extendEnv: false, reject: false, timeout: 10_000 });
    const dir = join(process.env['TMUX_TMPDIR'] || '/tmp', `tmux-${process.getuid?.() ?? 0}`);
    await rm(join(dir, this.socket), { force: true });
  }
}

/** The task-list row of `id`: from the selection marker to the end of the line. */
function row(screen: string, id: string): string {
  return screen.split('\n').find((line) => new RegExp(`^[› ] ${id} `).test(line)) ?? '';
}

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

async function setup(script: Script): Promise<{ root: string; server: RunningModelServer; term: Terminal; env: Record<string, string>; exitFile: string }> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
  const { root, cleanup } = await makeRepo({ 'BACKLOG.md': BACKLOG });
  cleanups.push(cleanup);
  // Outside the repository, so the checkout stays exactly as git and loopfleet left it.
  const scratch = await mkdtemp(join(tmpdir(), 'loopfleet-tmux-'));
  cleanups.push(() => rm(scratch, { recursive: true, force: true }));
  const server = await startModelServer({ apiKeys: [KEY], script });
  cleanups.push(() => server.close());
  const term = new Terminal();
  cleanups.push(() => term.kill());
  return { root, server, term, env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: KEY }, exitFile: join(scratch, 'exit-code') };
}

async function state(root: string): Promise<{ tasks: Record<string, { status: string; attempts: Array<{ outcome: string }> }> }> {
  return JSON.parse(await readFile(join(root, '.loop-worktrees', 'state.json'), 'utf8'));
}

describe.skipIf(!hasTmux)('the interactive view in a real terminal (tmux)', () => {
  it('runs the backlog, merges T-1 with m then y, and quits with q keeping state', { timeout: 120_000 }, async () => {
    const { root, term, env, exitFile } = await setup(demoScript(SCENARIOS, { chunkDelayMs: 5, delayMs: 20 }));
    await term.start(root, env, exitFile);

    const first = await term.waitFor(/T-1 ✔ verified/, 'T-1 verified', 60_000);
    // The fleet bar names the repository and base; the footer lists the keys.
    expect(first).toMatch(/loopfleet \S+ → main/);
    expect(first).toMatch(/m merge .* q quit/);
    expect(row(first, 'T-1')).toMatch(/Say hello/);
    await term.waitFor(/T-2 ✔ verified/, 'T-2 verified', 60_000);

    // T-1 is the first row and selected when the view opens; `g` selects the first row either way.
    await term.keys('g');
    await term.waitFor((s) => row(s, 'T-1').startsWith('› T-1'), 'T-1 selected');
    await term.keys('m');
    await term.waitFor(/\? Merge loop\/T-1 into main\? y\/n/, 'the merge question');
    // Nothing happens before the answer.
    expect(await git(root, 'log', '-1', '--format=%s', 'main')).toBe('initial');
    await term.keys('y');

    const merged = await term.waitFor((s) => /✓ merged/.test(row(s, 'T-1')), 'T-1 merged');
    await term.waitFor(/Merged loop\/T-1 into main/, 'the merge confirmation in the status line');
    expect(row(merged, 'T-2')).toMatch(/✔ verified/);
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
    await term.waitFor((s) => /✔ verified/.test(row(s, 'T-1')) && /▶ running/.test(row(s, 'T-2')), 'T-1 verified while T-2 runs', 60_000);
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
    const resumed = await term.waitFor((s) => /✔ verified/.test(row(s, 'T-2')), 'T-2 verified after the restart', 60_000);
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
