import type { ProcessRunner, RunOptions, RunResult } from '../../src/ports/process.js';

/** What a scripted command does: exit code and output, after an optional delay. */
export interface FakeRun {
  exitCode?: number | null;
  output?: string;
  delayMs?: number;
}

/**
 * A ProcessRunner that runs nothing: `script` says what each command does. It streams the output, honours
 * the abort signal and the timeout the way the real runner reports them.
 */
export class FakeRunner implements ProcessRunner {
  readonly commands: Array<{ command: string; cwd: string; env: Record<string, string>; sandboxed: boolean }> = [];

  constructor(private readonly script: (command: string, options: RunOptions) => FakeRun = () => ({})) {}

  async run(command: string, options: RunOptions): Promise<RunResult> {
    this.commands.push({ command, cwd: options.cwd, env: options.env, sandboxed: options.sandbox != null });
    const step = this.script(command, options);
    const started = Date.now();
    const waited = await new Promise<'done' | 'aborted' | 'timeout'>((resolve) => {
      if (options.signal?.aborted) return resolve('aborted');
      const delay = step.delayMs ?? 0;
      const timer = setTimeout(
        () => resolve(delay >= options.timeoutMs ? 'timeout' : 'done'),
        Math.min(delay, options.timeoutMs),
      );
      options.signal?.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          resolve('aborted');
        },
        { once: true },
      );
    });
    const output = step.output ?? '';
    if (waited === 'done' && output !== '') options.onOutput?.(output);
    return {
      exitCode: waited === 'done' ? (step.exitCode === undefined ? 0 : step.exitCode) : null,
      signal: waited === 'done' ? null : 'SIGTERM',
      timedOut: waited === 'timeout',
      aborted: waited === 'aborted',
      output,
      truncated: false,
      durationMs: Date.now() - started,
    };
  }

  async sandboxAvailable(): Promise<boolean> {
    return false;
  }
}
