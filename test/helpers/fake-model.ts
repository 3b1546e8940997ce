import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { AgentEvent, AgentRequest, AgentResult, ModelClient } from '../../src/ports/model.js';
import type { Role, Usage } from '../../src/domain/types.js';
import { attemptOf, taskOf } from '../../src/core/roles/marker.js';

/** What a scripted role does in one call. */
export interface FakeTurn {
  text?: string;
  /** files written in the worktree, relative paths */
  edits?: Record<string, string>;
  /** reported in `chunks` equal deltas, checking the abort signal between them */
  usage?: Usage;
  chunks?: number;
  /** ms to wait between chunks */
  delayMs?: number;
  /** thrown instead of answering */
  error?: Error;
  /** thrown before any usage, as an HTTP refusal (a 429) is */
  refuse?: Error;
  /** the call answers only once this settles: orders one task's step after another's, without timing */
  until?: Promise<unknown>;
}

export type FakeScript = (call: { role: Role; task: string; attempt: number; request: AgentRequest }) => FakeTurn;

const DEFAULT_USAGE: Usage = { input: 100, output: 20, cacheWrite: 0, cacheRead: 0 };

/** Where a scripted role's edits go: the real worktree on disk by default. */
export type WriteFile = (workdir: string, path: string, content: string) => Promise<void>;

async function writeToDisk(workdir: string, path: string, content: string): Promise<void> {
  await mkdir(dirname(join(workdir, path)), { recursive: true });
  await writeFile(join(workdir, path), content);
}

/**
 * A ModelClient for engine tests: no HTTP, but files written in the worktree (the real one, or a FakeGit's
 * working copy), usage streamed in deltas, `beforeCall` and the abort signal honoured like the real adapter does.
 */
export class FakeModel implements ModelClient {
  readonly calls: Array<{ role: Role; task: string; attempt: number; model: string; prompt: string; shell: boolean }> =
    [];
  // Fields, not parameter properties: the benchmarks load this file through Node's type stripping.
  private readonly script: FakeScript;
  private readonly write: WriteFile;

  constructor(script: FakeScript, write: WriteFile = writeToDisk) {
    this.script = script;
    this.write = write;
  }

  async runAgent(request: AgentRequest, onEvent: (event: AgentEvent) => void): Promise<AgentResult> {
    request.beforeCall();
    const task = taskOf(request.prompt) ?? '?';
    const attempt = attemptOf(request.prompt);
    this.calls.push({
      role: request.role,
      task,
      attempt,
      model: request.model,
      prompt: request.prompt,
      shell: request.shell,
    });
    const turn = this.script({ role: request.role, task, attempt, request });
    if (turn.refuse !== undefined) throw turn.refuse;
    if (turn.until !== undefined) await turn.until;
    const usage = turn.usage ?? DEFAULT_USAGE;
    const chunks = turn.chunks ?? 1;
    for (let i = 0; i < chunks; i++) {
      if (request.signal.aborted) throw request.signal.reason;
      const part = (n: number) => Math.floor(n / chunks) + (i === chunks - 1 ? n % chunks : 0);
      onEvent({
        type: 'usage',
        model: request.model,
        usage: {
          input: part(usage.input),
          output: part(usage.output),
          cacheWrite: part(usage.cacheWrite),
          cacheRead: part(usage.cacheRead),
        },
      });
      if (turn.delayMs !== undefined) await new Promise((r) => setTimeout(r, turn.delayMs));
    }
    if (request.signal.aborted) throw request.signal.reason;
    if (turn.error !== undefined) throw turn.error;
    for (const [path, content] of Object.entries(turn.edits ?? {})) {
      if (request.access !== 'write') throw new Error(`${request.role} tried to write ${path} with read-only tools`);
      await this.write(request.workdir, path, content);
      onEvent({ type: 'tool', name: 'write', input: JSON.stringify({ path }) });
    }
    const text =
      turn.text ?? (request.role === 'verifier' ? '{"pass":true,"reasons":["looks right"]}' : `${request.role} done`);
    onEvent({ type: 'text', text });
    return { text, turns: 1, stopReason: 'end_turn' };
  }
}
