import { ExecaRunner } from '../../src/adapters/sandbox/execa-runner.js';
import type { ProcessRunner, RunOptions, RunResult } from '../../src/ports/process.js';

/**
 * The real ProcessRunner (execa, bubblewrap) with every call recorded, so tests can assert what was asked
 * for. On a machine without a working sandbox, a sandboxed call is recorded as asked and then run without
 * one — a test double's concession, never the adapters' behaviour.
 */
export class RecordingRunner implements ProcessRunner {
  readonly calls: Array<{ command: string; options: RunOptions }> = [];
  readonly #inner: ProcessRunner = new ExecaRunner();

  sandboxAvailable(): Promise<boolean> {
    return this.#inner.sandboxAvailable();
  }

  async run(command: string, options: RunOptions): Promise<RunResult> {
    this.calls.push({ command, options });
    const canSandbox = options.sandbox ? await this.#inner.sandboxAvailable() : true;
    return this.#inner.run(command, canSandbox ? options : { ...options, sandbox: null });
  }
}
