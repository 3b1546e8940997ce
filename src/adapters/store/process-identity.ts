/**
 * Which process holds something: whether a pid is alive, and when it started, so that a pid the system
 * reused is told apart from the process that took a lock or made a scratch tree.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Whether a process with `pid` exists (one of another user's counts: EPERM). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * When process `pid` started, as an opaque string that differs between two processes that had the same
 * pid: on Linux field 22 of /proc/<pid>/stat (clock ticks since boot), elsewhere `ps -o lstart=`. Null when
 * the process is gone or the system says nothing.
 */
export function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // comm (field 2) may hold spaces and parentheses: count the fields after its closing one.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19] ?? null; // field 22 overall: 2 fields before the ones counted here
  } catch {
    if (process.platform === 'linux') return null;
  }
  try {
    const out = execFileSync('ps', ['-o', 'lstart=', '-p', String(pid)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    return out === '' ? null : out;
  } catch {
    return null;
  }
}
