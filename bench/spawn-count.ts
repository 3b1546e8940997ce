/**
 * Counts the processes this process starts, with the time each `spawn` call blocks the event loop (the
 * fork happens synchronously inside it). Import it before the engine is loaded: it replaces
 * `child_process.spawn`, which git (through simple-git) and execa both call.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import childProcess from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';

Error.stackTraceLimit = 50;

export interface SpawnRecord {
  /** `git <subcommand>`, `bwrap`, `sh`... */
  command: string;
  args: string[];
  cwd: string | null;
  /** how long the spawn call itself took (the event loop is blocked meanwhile) */
  syncMs: number;
  /** the engine's innermost frame that led here (a `dist/` file and line), or null when none is on the stack */
  site: string | null;
}

export const spawns: SpawnRecord[] = [];

const original = childProcess.spawn;
/** git's own options that come before the subcommand */
const GIT_VALUE_OPTIONS = new Set(['-c', '-C', '--git-dir', '--work-tree', '--namespace']);

function describe(file: string, args: readonly string[]): string {
  const name = file.split('/').pop() ?? file;
  if (name !== 'git') return name;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (GIT_VALUE_OPTIONS.has(a)) i++;
    else if (!a.startsWith('-')) return `git ${a}`;
  }
  return 'git';
}

const DIST = `${new URL('../dist/', import.meta.url).pathname}`;

/**
 * The engine frames of a stack, innermost first, `file:line` relative to dist/. V8's async stack traces
 * follow `await`, so a git started by simple-git's queue still shows the adapter method that awaited it.
 */
function siteOf(stack: string): string | null {
  const frames: string[] = [];
  for (const line of stack.split('\n')) {
    const at = line.indexOf(DIST);
    if (at < 0) continue;
    const m = /^(.*?):(\d+):\d+\)?$/.exec(line.slice(at + DIST.length));
    if (m) frames.push(`${m[1]}:${m[2]}`);
    if (frames.length === 3) break;
  }
  return frames.length === 0 ? null : frames.join(' < ');
}

/** The engine call site of the git command being started, for a call whose process starts from a queue. */
const sites = new AsyncLocalStorage<string | null>();

/**
 * Records the caller of each of `methods` of `proto` (a class's prototype) as the call site of the processes
 * they start. simple-git starts git from its own queue, where the stack no longer shows the engine.
 */
export function traceSites(proto: object, methods: readonly string[]): void {
  for (const name of methods) {
    const original = Reflect.get(proto, name) as (...a: unknown[]) => unknown;
    Reflect.set(proto, name, function (this: unknown, ...args: unknown[]) {
      return sites.run(siteOf(new Error().stack ?? ''), () => original.apply(this, args));
    });
  }
}

const patched = function (this: unknown, file: string, ...rest: unknown[]) {
  const args = Array.isArray(rest[0]) ? (rest[0] as string[]) : [];
  const options = (Array.isArray(rest[0]) ? rest[1] : rest[0]) as { cwd?: string | URL } | undefined;
  const start = performance.now();
  const site = siteOf(new Error().stack ?? '') ?? sites.getStore() ?? null;
  const child = (original as (...a: unknown[]) => unknown).call(this, file, ...rest);
  spawns.push({
    command: describe(file, args),
    args,
    cwd: options?.cwd === undefined ? null : String(options.cwd),
    syncMs: performance.now() - start,
    site,
  });
  return child;
};
(childProcess as { spawn: unknown }).spawn = patched;
syncBuiltinESMExports();
