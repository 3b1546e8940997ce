/**
 * A process limit for each sandboxed command: a pids cgroup of its own (cgroup v1's pids hierarchy, or a
 * cgroup v2 folder whose pids controller is already delegated to loopfleet's cgroup).
 *
 * Why a cgroup: under root, the sandbox's uid maps to host uid 0, which RLIMIT_NPROC never applies to; as
 * an ordinary user RLIMIT_NPROC counts every process of that user on the host, not the sandbox's. Where
 * no cgroup can be made the sandbox has no process limit, and `processLimit()` says so (doctor shows it).
 *
 * Invariants: the command's first process joins the cgroup before it execs bubblewrap, so every process
 * of the sandbox is counted; the cgroup is removed after the run, its stragglers killed first.
 */
import { readFile, mkdir, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** Processes (threads count too) one sandboxed command may have at once. */
export const SANDBOX_MAX_PROCESSES = 4096;

let seq = 0;

async function readOptional(p: string): Promise<string | null> {
  try {
    return await readFile(p, 'utf8');
  } catch {
    return null;
  }
}

/** The folder under which this process can create pids cgroups, or null. */
async function findParent(): Promise<string | null> {
  const own = (await readOptional('/proc/self/cgroup')) ?? '';
  const v1 = /^\d+:(?:[^:]*,)?pids(?:,[^:]*)?:(.*)$/m.exec(own)?.[1];
  if (v1 !== undefined && (await readOptional('/sys/fs/cgroup/pids/cgroup.procs')) !== null) {
    return path.join('/sys/fs/cgroup/pids', v1);
  }
  const v2 = /^0::(.*)$/m.exec(own)?.[1];
  if (v2 !== undefined) {
    const dir = path.join('/sys/fs/cgroup', v2);
    const delegated = await readOptional(path.join(dir, 'cgroup.subtree_control'));
    if (delegated?.split(/\s+/).includes('pids') === true) return dir;
  }
  return null;
}

/** `at`, when a process of ours can create a cgroup there and join it; else null. */
async function usable(at: string | null): Promise<string | null> {
  if (at === null) return null;
  const dir = path.join(at, `loopfleet-${process.pid}-probe`);
  try {
    await mkdir(dir);
    await writeFile(path.join(dir, 'pids.max'), '8');
    await execFileAsync('/bin/sh', ['-c', 'echo $$ > "$0/cgroup.procs"', dir]);
    return at;
  } catch {
    return null;
  } finally {
    await rmdir(dir).catch(() => undefined);
  }
}

let parent: Promise<string | null> | undefined;

export class PidsCgroup {
  private constructor(
    readonly dir: string,
    readonly max: number,
  ) {}

  /** A new cgroup limited to `max` processes, or null where none can be made here. */
  static async create(max = SANDBOX_MAX_PROCESSES): Promise<PidsCgroup | null> {
    parent ??= findParent().then(usable);
    const at = await parent;
    if (at === null) return null;
    const dir = path.join(at, `loopfleet-${process.pid}-${++seq}`);
    try {
      await mkdir(dir);
      await writeFile(path.join(dir, 'pids.max'), String(max));
    } catch {
      await rmdir(dir).catch(() => undefined);
      return null;
    }
    return new PidsCgroup(dir, max);
  }

  /** `file args…` started so that its first process joins this cgroup before anything else runs. */
  wrap(file: string, args: readonly string[]): { file: string; args: string[] } {
    return { file: '/bin/sh', args: ['-c', 'echo $$ > "$0/cgroup.procs" && exec "$@"', this.dir, file, ...args] };
  }

  /** Whether a fork was refused because the limit was reached. */
  async reached(): Promise<boolean> {
    const events = (await readOptional(path.join(this.dir, 'pids.events'))) ?? '';
    return Number(/^max (\d+)/m.exec(events)?.[1] ?? 0) > 0;
  }

  /** Kills what is left in the cgroup and removes it. */
  async remove(): Promise<void> {
    for (let i = 0; i < 50; i++) {
      const procs = ((await readOptional(path.join(this.dir, 'cgroup.procs'))) ?? '')
        .split('\n')
        .filter((l) => l !== '');
      for (const pid of procs) {
        try {
          process.kill(Number(pid), 'SIGKILL');
        } catch {
          // already gone
        }
      }
      try {
        await rmdir(this.dir);
        return;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') return;
        if (code !== 'EBUSY') throw error;
      }
      // Killed processes leave the cgroup once the kernel has reaped them.
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`cannot remove the sandbox's cgroup ${this.dir}: processes are still in it`);
  }
}

/** How the sandbox's process count is bounded here, for doctor. */
export async function processLimit(): Promise<string> {
  const probe = await PidsCgroup.create(SANDBOX_MAX_PROCESSES);
  if (probe === null) {
    return 'unbounded: no pids cgroup can be made here (cgroup v1 pids, or a delegated cgroup v2 pids controller), and RLIMIT_NPROC cannot bound a sandbox';
  }
  await probe.remove();
  return `at most ${SANDBOX_MAX_PROCESSES} processes per sandboxed command (a pids cgroup under ${path.dirname(probe.dir)})`;
}
