/**
 * Shared pieces of the benchmarks: statistics, tables, scratch repositories, timing wrappers around the
 * real adapters and a scripted in-process model.
 *
 * The benchmarks import the engine from src/ like any other module; they run under the resolution
 * {@link HOOKS} registers, which loads the compiled dist/ in its place.
 */
import childProcess, { execFile } from 'node:child_process';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Role } from '../src/domain/types.js';
import type { AgentEvent, AgentRequest, AgentResult, ModelClient } from '../src/ports/model.js';
import { HOOKS } from './hooks.js';

const run = promisify(execFile);

/**
 * Quick mode (`node bench/run.ts --quick`, BENCH_QUICK=1): each benchmark runs once with small sizes, to
 * show that it still runs to the end; its figures are not measurements.
 */
export const quick = process.env['BENCH_QUICK'] === '1';

/** the built CLI, the one program the benchmarks start as it ships (`npm run build` first) */
export const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

/** The arguments that start the benchmark module `file` in a Node process of its own, under {@link HOOKS}. */
export function benchArgs(file: string, ...args: string[]): string[] {
  return ['--import', HOOKS, file, ...args];
}

/** One line of the final summary. */
export interface SummaryRow {
  figure: string;
  value: string;
  target: string;
  /** null: reported, no target */
  pass: boolean | null;
}

/** Where a benchmark child writes its summary rows (run.ts passes the path). */
export async function report(rows: SummaryRow[]): Promise<void> {
  const out = process.env['BENCH_OUT'];
  if (out !== undefined && out !== '') await writeFile(out, JSON.stringify(rows));
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function mean(values: readonly number[]): number {
  return values.length === 0 ? NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export function ms(value: number, digits = 1): string {
  return `${value.toFixed(digits)} ms`;
}

export function ratio(value: number): string {
  return `${value.toFixed(2)}×`;
}

export function verdict(pass: boolean | null): string {
  return pass === null ? 'info' : pass ? 'PASS' : 'MISS';
}

/** A plain-text table: the first row is the header; numbers-looking cells are right-aligned. */
export function table(rows: ReadonlyArray<ReadonlyArray<string>>): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  const numeric = /^[-+]?[\d.,]+( ?(ms|MB|%|×|s|tok))?$/;
  const line = (row: ReadonlyArray<string>) =>
    row
      .map((cell, i) => (numeric.test(cell) && i > 0 ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  const [head, ...body] = rows;
  if (head === undefined) return '';
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

/**
 * The machine's load average (1, 5 and 15 minutes) against its cores, printed beside the figures: on a
 * busy machine milliseconds grow, while ratios move less and counts of processes not at all.
 */
export function load(): string {
  const [one, five, fifteen] = loadavg().map((l) => l.toFixed(1));
  return `load ${one} / ${five} / ${fifteen} on ${availableParallelism()} cpus`;
}

export function section(title: string): void {
  process.stdout.write(`\n== ${title}\n\n`);
}

export function print(text: string): void {
  process.stdout.write(`${text}\n`);
}

// ── repositories ──

export const GIT_ENV: Record<string, string> = {
  GIT_AUTHOR_NAME: 'Bench Person',
  GIT_AUTHOR_EMAIL: 'bench@example.com',
  GIT_COMMITTER_NAME: 'Bench Person',
  GIT_COMMITTER_EMAIL: 'bench@example.com',
};

export async function git(cwd: string, ...args: string[]): Promise<string> {
  const { stdout } = await run('git', args, { cwd, env: { ...process.env, ...GIT_ENV } });
  return stdout.trim();
}

/** git through `child_process.spawn` itself (so that spawn-count.ts sees it), output ignored. */
export function gitSpawn(cwd: string, ...args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = childProcess.spawn('git', args, {
      cwd,
      env: { ...process.env, ...GIT_ENV },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`git ${args.join(' ')} exited ${code}: ${stderr.trim()}`)),
    );
  });
}

/** A real repository in a temp folder with `files` committed on `main`. */
export async function makeRepo(files: Record<string, string>): Promise<{ root: string; cleanup: () => Promise<void> }> {
  const root = await mkdtemp(join(tmpdir(), 'loopfleet-bench-'));
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), content);
  }
  await git(root, 'init', '--quiet', '--initial-branch=main');
  await git(root, 'add', '-A');
  await git(root, 'commit', '--quiet', '-m', 'initial');
  // Retried: a git process that outlived its caller by a moment may still be writing in there.
  return { root, cleanup: () => rm(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }) };
}

/** BACKLOG.md text: front matter and `n` trivial tasks T-1…T-n. */
export function backlogText(front: string, n: number): string {
  const items = Array.from(
    { length: n },
    (_, i) => `- [ ] T-${i + 1} Write file ${i + 1}\n  Put one line into T-${i + 1}.txt.`,
  );
  return `---\n${front.trim()}\n---\n\n# Backlog\n\n${items.join('\n')}\n`;
}

/** A small project: a few files, so that worktrees have something to check out. */
export function sampleFiles(): Record<string, string> {
  const files: Record<string, string> = {
    'README.md': '# Sample\n\nA small project for the benchmarks.\n',
    'package.json': '{ "name": "sample", "version": "1.0.0", "private": true }\n',
  };
  for (let i = 0; i < 20; i++) files[`src/module-${i}.js`] = `export function f${i}(x) {\n  return x + ${i};\n}\n`;
  return files;
}

// ── timing wrappers ──

export interface CallRecord {
  service: string;
  op: string;
  task: string | null;
  start: number;
  ms: number;
}

export class Timings {
  readonly calls: CallRecord[] = [];
  record(call: CallRecord): void {
    this.calls.push(call);
  }
}

const TASK_ID = /(?:^|[^A-Za-z0-9])([A-Z]+-\d+)(?!\d)/;

/** The task a call is about, from a worktree path, a branch name or a task id among its arguments. */
export function taskOfArgs(args: readonly unknown[]): string | null {
  for (const arg of args) {
    const text =
      typeof arg === 'string'
        ? arg
        : typeof arg === 'object' && arg !== null && 'cwd' in arg
          ? String((arg as { cwd: unknown }).cwd)
          : null;
    if (text === null) continue;
    const match = TASK_ID.exec(text);
    if (match?.[1] !== undefined) return match[1];
  }
  return null;
}

/**
 * The same object with every method call timed (wall clock from call to settle). Methods run on the real
 * instance, so adapters with private fields keep working.
 */
export function timed<T extends object>(
  service: string,
  target: T,
  timings: Timings,
  taskOf: (op: string, args: unknown[]) => string | null = (_op, args) => taskOfArgs(args),
): T {
  return new Proxy(target, {
    get(obj, prop) {
      const value = Reflect.get(obj, prop, obj) as unknown;
      if (typeof value !== 'function' || typeof prop !== 'string') return value;
      return (...args: unknown[]) => {
        const start = performance.now();
        const done = () =>
          timings.record({ service, op: prop, task: taskOf(prop, args), start, ms: performance.now() - start });
        const result = (value as (...a: unknown[]) => unknown).apply(obj, args);
        if (result instanceof Promise) return result.finally(done);
        done();
        return result;
      };
    },
  });
}

// ── a scripted model ──

export interface ScriptedModelOptions {
  /** ms each call takes (setTimeout); 0 answers at once */
  latencyMs: number;
  /** called with the task id: the implementer writes `<id>.txt` */
  taskOf: (prompt: string) => string | null;
}

/**
 * A ModelClient in process: the implementer writes one file in the worktree, the reviewer passes. It
 * reports one usage event and one tool event like a real client would, honours `beforeCall` and the
 * abort signal, and records how long each call took per task.
 */
export class ScriptedModel implements ModelClient {
  readonly calls: Array<{ role: Role; task: string | null; start: number; ms: number }> = [];
  /** calls in flight now, and the most there were at once */
  inFlight = 0;
  maxInFlight = 0;
  readonly #opts: ScriptedModelOptions;

  constructor(options: ScriptedModelOptions) {
    this.#opts = options;
  }

  async runAgent(request: AgentRequest, onEvent: (event: AgentEvent) => void): Promise<AgentResult> {
    const start = performance.now();
    const task = this.#opts.taskOf(request.prompt);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      request.beforeCall();
      if (this.#opts.latencyMs > 0) {
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(resolve, this.#opts.latencyMs);
          request.signal.addEventListener(
            'abort',
            () => {
              clearTimeout(timer);
              reject(request.signal.reason);
            },
            { once: true },
          );
        });
      }
      if (request.signal.aborted) throw request.signal.reason;
      onEvent({
        type: 'usage',
        model: request.model,
        usage: { input: 1200, output: 150, cacheWrite: 0, cacheRead: 0 },
      });
      if (request.role === 'implementer' && task !== null) {
        await writeFile(join(request.workdir, `${task}.txt`), `${task} done\n`);
        onEvent({ type: 'tool', name: 'write', input: JSON.stringify({ file_path: `${task}.txt` }) });
      }
      const text =
        request.role === 'verifier' ? '{"pass":true,"reasons":["the file is there"]}' : `${request.role} done`;
      onEvent({ type: 'text', text });
      return { text, turns: 1, stopReason: 'end_turn' };
    } finally {
      this.inFlight--;
      this.calls.push({ role: request.role, task, start, ms: performance.now() - start });
    }
  }
}

/** The environment a session is opened with: a model endpoint that is never called (the model is in process). */
export function sessionEnv(): NodeJS.ProcessEnv {
  return { ...process.env, ANTHROPIC_API_KEY: 'bench-key', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' };
}
