/**
 * A fork bomb in the sandbox is bounded: a pids cgroup per sandboxed command (where one can be made —
 * here, as root). The bomb is itself bounded (2,000 sleeping children at most) so that the test cannot
 * hang the machine without the limit either.
 */
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ExecaRunner } from '../../../src/adapters/sandbox/execa-runner.js';
import { PidsCgroup, processLimit } from '../../../src/adapters/sandbox/pids.js';

const runner = new ExecaRunner({ maxProcesses: 64 });
const available = await runner.sandboxAvailable();
const probe = await PidsCgroup.create(8);
await probe?.remove();

let temps: string[] = [];
afterEach(async () => {
  for (const t of temps) await rm(t, { recursive: true, force: true });
  temps = [];
});

const BOMB = 'n=0; while [ $n -lt 2000 ]; do sleep 30 & n=$((n+1)); echo $n > started; done; echo all started; wait';

describe.runIf(available && probe !== null)('the sandbox process limit', () => {
  it('stops a fork bomb at the limit: the command fails saying so, and nothing of it is left running', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'lf-pids-'));
    temps.push(dir);
    const r = await runner.run(BOMB, {
      cwd: dir,
      env: { PATH: '/usr/bin:/bin' },
      timeoutMs: 30_000,
      sandbox: { writable: [dir] },
    });
    const started = Number((await readFile(path.join(dir, 'started'), 'utf8')).trim());
    expect(started).toBeLessThan(64);
    expect(r.output).not.toContain('all started');
    expect({ exitCode: r.exitCode, timedOut: r.timedOut }).toEqual({ exitCode: null, timedOut: false });
    expect(r.output).toContain('the sandbox reached its process limit (64 processes)');
    // The cgroup is gone, so every process in it was killed.
    expect((await readdir(path.dirname(probe!.dir))).filter((n) => n.startsWith(`loopfleet-${process.pid}-`))).toEqual(
      [],
    );
  }, 40_000);

  it('doctor can say how processes are bounded', async () => {
    expect(await processLimit()).toMatch(/^at most 4096 processes per sandboxed command/);
  });
});

describe.runIf(probe === null)('without a pids cgroup (an ordinary user here)', () => {
  it('doctor says the sandbox has no process limit', async () => {
    expect(await processLimit()).toMatch(/^unbounded: no pids cgroup can be made here/);
  });
});
