/**
 * A fork bomb in the sandbox is bounded: a pids cgroup per sandboxed command (where one can be made —
 * here, as root). The bomb is itself bounded (2,000 sleeping children at most) so that the test cannot
 * hang the machine without the limit either.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { ExecaRunner } from '../../../src/adapters/sandbox/execa-runner.js';
import { PidsCgroup, processLimit } from '../../../src/adapters/sandbox/pids.js';
import { DIST } from '../../helpers/paths.js';

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

/** What doctor says as an ordinary user, who cannot make a pids cgroup here: the built module through setpriv. */
async function limitAsNobody(): Promise<string> {
  const setpriv = ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => existsSync(p));
  expect(setpriv, 'setpriv (util-linux) runs the ordinary-user case').toBeDefined();
  const module = path.join(DIST, 'adapters', 'sandbox', 'pids.js');
  expect(existsSync(module), `${module}: run \`npm run build\` first`).toBe(true);
  const script = `const { processLimit } = await import(${JSON.stringify(module)}); console.log(await processLimit());`;
  const r = await execa(
    setpriv!,
    ['--reuid', '65534', '--regid', '65534', '--clear-groups', process.execPath, '--input-type=module', '-e', script],
    { cwd: '/', env: { PATH: '/usr/bin:/bin' }, extendEnv: false, reject: false },
  );
  expect(r.stderr).toBe('');
  return r.stdout.trim();
}

describe('without a pids cgroup (an ordinary user)', () => {
  it('doctor says the sandbox has no process limit', async () => {
    // As root here, where a cgroup can be made, the case is run as an ordinary user.
    const said = probe === null ? await processLimit() : await limitAsNobody();
    expect(said).toMatch(/^unbounded: no pids cgroup can be made here/);
  });
});
