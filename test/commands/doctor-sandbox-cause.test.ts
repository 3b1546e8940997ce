/**
 * `loopfleet doctor` on hosts where bubblewrap cannot run: the sandbox line names the cause the host's
 * diagnosis found and its exact fix, from a host laid out in a temp folder whose `bwrap` fails as the real
 * one does there. The exit code stays 1 under `sandbox: auto` and 0 under `sandbox: off`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { diagnoseSandbox } from '../../src/adapters/sandbox/userns-diagnosis.js';
import { doctor } from '../../src/commands/doctor.js';
import { findRepo } from '../../src/commands/repo.js';
import { backlog } from '../helpers/fleet-harness.js';
import { makeRepo } from '../helpers/git-repo.js';
import { fakeUsernsHost, type FakeHost } from '../helpers/userns-host.js';

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

async function doctorOn(host: FakeHost, front = 'check: "true"'): Promise<{ code: number; lines: string[] }> {
  const h = await fakeUsernsHost(host);
  cleanups.push(h.cleanup);
  const r = await makeRepo({ 'BACKLOG.md': backlog(`${front}\nreview: false`, '- [ ] T-1 One') });
  cleanups.push(r.cleanup);
  const lines: string[] = [];
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: r.root, ANTHROPIC_API_KEY: 'k' };
  const code = await doctor(await findRepo(r.root), env, (l) => lines.push(l), {
    sandboxCause: () => diagnoseSandbox(h.facts),
  });
  return { code, lines };
}

const UBUNTU_2404: FakeHost = {
  files: {
    '/proc/sys/kernel/apparmor_restrict_unprivileged_userns': '1\n',
    '/proc/sys/user/max_user_namespaces': '63457\n',
  },
  bwrap: { stderr: 'bwrap: setting up uid map: Permission denied\n', exitCode: 1 },
};

describe('doctor: why the sandbox cannot run here', () => {
  it('on Ubuntu 24.04 names AppArmor, the profile to install and load, and the sysctl with its risk; exit 1', async () => {
    const { code, lines } = await doctorOn(UBUNTU_2404);
    expect(code).toBe(1);
    const sandbox = lines.filter((l) => l.includes('fleet: sandbox:'));
    expect(sandbox).toEqual([
      'FAIL fleet: sandbox: bubblewrap cannot run here: AppArmor lets only programs with a profile make user namespaces ' +
        '(kernel.apparmor_restrict_unprivileged_userns=1), and none covers /usr/bin/bwrap (bwrap: setting up uid map: Permission denied). ' +
        'Fix: install and load the profile Ubuntu ships for bubblewrap: sudo apt install apparmor-profiles && ' +
        'sudo install -m 0644 /usr/share/apparmor/extra-profiles/bwrap-userns-restrict /etc/apparmor.d/bwrap-userns-restrict && ' +
        'sudo apparmor_parser -r /etc/apparmor.d/bwrap-userns-restrict; or sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 lifts the ' +
        'restriction for every program instead (its risk: any unprivileged process may again make user namespaces, the kernel attack surface ' +
        'the restriction closes); or set sandbox: off',
    ]);
    // Unsandboxed, doctor does not look for a process limit of the sandbox.
    expect(lines.some((l) => l.includes('fleet: processes:'))).toBe(false);
  });

  it('in a docker container names the options to run it with', async () => {
    const { lines } = await doctorOn({
      files: { '/.dockerenv': '', '/proc/self/status': 'Seccomp:\t2\n' },
      bwrap: { stderr: 'bwrap: Creating new namespace failed: Operation not permitted\n', exitCode: 1 },
    });
    expect(lines.find((l) => l.includes('fleet: sandbox:'))).toMatch(
      /^FAIL fleet: sandbox: bubblewrap cannot run here: this runs in a docker container whose seccomp filter forbids the namespaces bubblewrap makes \(bwrap: Creating new namespace failed: Operation not permitted\)\. Fix: run the container with --security-opt seccomp=unconfined --security-opt apparmor=unconfined/,
    );
  });

  it('under sandbox: off the cause is still named, and the line passes (exit as the other checks say)', async () => {
    const { code, lines } = await doctorOn(
      {
        files: { '/proc/sys/user/max_user_namespaces': '0\n' },
        bwrap: { stderr: 'bwrap: Creating new namespace failed: No space left on device\n', exitCode: 1 },
      },
      'check: "true"\nsandbox: off',
    );
    expect(lines.find((l) => l.includes('fleet: sandbox:'))).toBe(
      'ok   fleet: sandbox: bubblewrap cannot run here: user namespaces are switched off: user.max_user_namespaces is 0 (bwrap: Creating new namespace failed: No space left on device). ' +
        'Fix: sudo sysctl -w user.max_user_namespaces=15000 (to keep it after a reboot: echo user.max_user_namespaces=15000 | sudo tee /etc/sysctl.d/90-bubblewrap.conf); or set sandbox: off',
    );
    expect(code).toBe(0);
  });

  it('where the probe runs, says bubblewrap works', async () => {
    const { lines } = await doctorOn({ bwrap: { stderr: '', exitCode: 0 } });
    expect(lines.find((l) => l.includes('fleet: sandbox:'))).toBe('ok   fleet: sandbox: bubblewrap works');
  });
});
