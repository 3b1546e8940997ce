import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { execa } from 'execa';
import { CLI } from './paths.js';

/** A real terminal (tmux) running the built CLI: keys typed into it, the screen read back from the pane. */

export { CLI };
const COLUMNS = 120;
const ROWS = 35;
const SESSION = 'fleet';

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
export class Terminal {
  readonly #columns: number;
  readonly #rows: number;
  readonly socket = `loopfleet-e2e-${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  #exitFile = '';

  constructor(size: { columns: number; rows: number } = { columns: COLUMNS, rows: ROWS }) {
    this.#columns = size.columns;
    this.#rows = size.rows;
  }

  async tmux(...args: string[]): Promise<string> {
    const r = await execa('tmux', ['-L', this.socket, '-f', '/dev/null', ...args], {
      env: tmuxEnv(),
      extendEnv: false,
      timeout: 10_000,
    });
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
    const command = [
      'env',
      '-u',
      'ANTHROPIC_AUTH_TOKEN',
      '-u',
      'NO_COLOR',
      ...assignments,
      process.execPath,
      CLI,
      ...args,
    ];
    await this.tmux(
      'new-session',
      '-d',
      '-s',
      SESSION,
      '-x',
      String(this.#columns),
      '-y',
      String(this.#rows),
      '-c',
      cwd,
      // several arguments: tmux runs them directly, with no shell of its own to quote for
      'sh',
      '-c',
      'f=$1; shift; "$@"; echo $? > "$f.tmp"; mv "$f.tmp" "$f"',
      'sh',
      exitFile,
      ...command,
      ';',
      'set-option',
      '-p',
      '-t',
      SESSION,
      'remain-on-exit',
      'on',
    );
  }

  /** Resizes the window as a person dragging the terminal's edge would; the program gets SIGWINCH. */
  async resize(columns: number, rows: number): Promise<void> {
    await this.tmux('resize-window', '-t', SESSION, '-x', String(columns), '-y', String(rows));
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
      if (Date.now() > deadline)
        throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; the screen was:\n${screen}`);
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
      if (Date.now() > deadline)
        throw new Error(`the CLI did not exit within ${timeoutMs} ms; the screen was:\n${await this.screen()}`);
      await sleep(200);
    }
  }

  /** Ends the session (the server goes with its last session) so the next start gets a fresh one. */
  async closeSession(): Promise<void> {
    await this.tmux('kill-session', '-t', SESSION).catch(() => '');
  }

  /** Stops the server and removes its socket file, which tmux leaves behind. */
  async kill(): Promise<void> {
    await execa('tmux', ['-L', this.socket, 'kill-server'], {
      env: tmuxEnv(),
      extendEnv: false,
      reject: false,
      timeout: 10_000,
    });
    const dir = join(process.env['TMUX_TMPDIR'] || '/tmp', `tmux-${process.getuid?.() ?? 0}`);
    await rm(join(dir, this.socket), { force: true });
  }
}

/** The task-list row of `id`: from the selection marker to the end of the line. */
export function row(screen: string, id: string): string {
  return screen.split('\n').find((line) => new RegExp(`^[› ] ${id} `).test(line)) ?? '';
}
