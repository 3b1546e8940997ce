/**
 * What every process a run starts holds: its command line and environment, read from `/proc`.
 *
 * Two views, because neither alone sees everything:
 * - {@link gitRecorder}: a `git` on PATH that writes its own `/proc/self/environ` and `cmdline` before it
 *   execs the real git — every git loopfleet starts by name is recorded, however short it lives;
 * - {@link sampleDescendants}: a sweep of `/proc` for every descendant of a process (checks, setup, `gh`,
 *   the git subprocesses git itself starts), over and over until stopped.
 */
import { execFileSync } from 'node:child_process';
import { chmod, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ProcessRecord {
  pid: number;
  /** the parent's pid, when the record came from a sweep */
  ppid?: number;
  argv: string[];
  /** `NAME=value` entries as the process got them */
  environ: string[];
}

function split(raw: Buffer): string[] {
  return raw
    .toString('utf8')
    .split('\0')
    .filter((s) => s !== '');
}

export interface GitRecorder {
  /** the folder to put first on PATH */
  bin: string;
  records(): Promise<ProcessRecord[]>;
  cleanup(): Promise<void>;
}

/** A `git` wrapper that records every git started through PATH, then runs the real one. */
export async function gitRecorder(): Promise<GitRecorder> {
  const dir = await mkdtemp(join(tmpdir(), 'lf-gitrec-'));
  const bin = join(dir, 'bin');
  const out = join(dir, 'out');
  await import('node:fs/promises').then((fs) => Promise.all([fs.mkdir(bin), fs.mkdir(out)]));
  const real = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
  // A write that fails (the wrapper seen from inside a sandbox, read-only) must not stop git.
  await writeFile(
    join(bin, 'git'),
    `#!/bin/sh\ncat /proc/$$/environ > '${out}'/$$.env 2>/dev/null\ncat /proc/$$/cmdline > '${out}'/$$.cmd 2>/dev/null\nexec '${real}' "$@"\n`,
  );
  await chmod(join(bin, 'git'), 0o755);
  return {
    bin,
    async records() {
      const names = (await readdir(out)).filter((n) => n.endsWith('.cmd'));
      const found: ProcessRecord[] = [];
      for (const name of names) {
        const pid = Number(name.slice(0, -4));
        const argv = split(await readFile(join(out, name)));
        const environ = split(await readFile(join(out, `${pid}.env`)).catch(() => Buffer.alloc(0)));
        // argv[0] is the shell, argv[1] this wrapper: what git was asked to do follows.
        found.push({ pid, argv: ['git', ...argv.slice(2)], environ });
      }
      return found;
    },
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

async function parentOf(pid: string): Promise<number | null> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may hold spaces: the fields after its last `)` are fixed.
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return null;
  }
}

export interface Sampler {
  /**
   * stops sweeping; every (process, command line) seen. A child read between its fork and its exec still has
   * its parent's command line and environment: those records carry `root`'s argv and are left out.
   */
  stop(): Promise<ProcessRecord[]>;
  /** how many sweeps of `/proc` were made so far */
  readonly sweeps: number;
}

/** Whether `record` descends from one of `pids`, through the records seen. */
export function descendsFrom(record: ProcessRecord, pids: ReadonlySet<number>, all: readonly ProcessRecord[]): boolean {
  const parent = new Map(all.map((r) => [r.pid, r.ppid]));
  for (let at = record.ppid, hops = 0; at !== undefined && hops < 64; at = parent.get(at), hops++)
    if (pids.has(at)) return true;
  return false;
}

/** Sweeps `/proc` for descendants of `root` until stopped; each sweep starts when the one before ended. */
export function sampleDescendants(root: number): Sampler {
  const seen = new Map<string, ProcessRecord>();
  let rootArgv: string | null = null;
  let sweeps = 0;
  let running = true;
  const sweep = async (): Promise<void> => {
    const tree = new Set([root]);
    const parents = new Map<number, number>();
    const pids = (await readdir('/proc')).filter((name) => /^\d+$/.test(name));
    const ppids = await Promise.all(pids.map((pid) => parentOf(pid)));
    pids.forEach((pid, i) => {
      const ppid = ppids[i];
      if (ppid !== null && ppid !== undefined) parents.set(Number(pid), ppid);
    });
    // Parents before children is not guaranteed by pid order: walk until nothing is added.
    for (let added = true; added; ) {
      added = false;
      for (const [pid, ppid] of parents) {
        if (!tree.has(pid) && tree.has(ppid)) {
          tree.add(pid);
          added = true;
        }
      }
    }
    tree.delete(root);
    rootArgv ??= await readFile(`/proc/${root}/cmdline`, 'utf8').catch(() => null);
    await Promise.all(
      [...tree].map(async (pid) => {
        try {
          const raw = await readFile(`/proc/${pid}/cmdline`, 'utf8');
          const environ = split(await readFile(`/proc/${pid}/environ`));
          if (raw !== '' && raw !== rootArgv)
            seen.set(`${pid} ${raw}`, { pid, ppid: parents.get(pid), argv: split(Buffer.from(raw)), environ });
        } catch {
          // gone between the listing and the read
        }
      }),
    );
    sweeps++;
  };
  const loop = (async () => {
    while (running) {
      await sweep();
      await new Promise((r) => setImmediate(r));
    }
  })();
  return {
    get sweeps() {
      return sweeps;
    },
    async stop() {
      running = false;
      await loop;
      return [...seen.values()];
    },
  };
}
