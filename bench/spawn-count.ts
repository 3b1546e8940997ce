/**
 * Counts the processes this process starts, with the time each `spawn` call blocks the event loop (the
 * fork happens synchronously inside it). Import it before the engine is loaded: it replaces
 * `child_process.spawn`, which git (through simple-git) and execa both call.
 */
import childProcess from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';

export interface SpawnRecord {
  /** `git <subcommand>`, `bwrap`, `sh`... */
  command: string;
  args: string[];
  cwd: string | null;
  /** how long the spawn call itself took (the event loop is blocked meanwhile) */
  syncMs: number;
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

const patched = function (this: unknown, file: string, ...rest: unknown[]) {
  const args = Array.isArray(rest[0]) ? (rest[0] as string[]) : [];
  const options = (Array.isArray(rest[0]) ? rest[1] : rest[0]) as { cwd?: string | URL } | undefined;
  const start = performance.now();
  const child = (original as (...a: unknown[]) => unknown).call(this, file, ...rest);
  spawns.push({
    command: describe(file, args),
    args,
    cwd: options?.cwd === undefined ? null : String(options.cwd),
    syncMs: performance.now() - start,
  });
  return child;
};
(childProcess as { spawn: unknown }).spawn = patched;
syncBuiltinESMExports();
