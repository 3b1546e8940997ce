/**
 * The diagnosis of a host where bubblewrap cannot run, on hosts laid out in temp folders (their /proc/sys
 * files, AppArmor profiles, container marks) whose `bwrap` fails as the real one does there.
 */
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import {
  BWRAP_PROFILE,
  EXTRA_BWRAP_PROFILE,
  bwrapProfileCommand,
  diagnoseSandbox,
} from '../../../src/adapters/sandbox/userns-diagnosis.js';
import type { SandboxCause } from '../../../src/domain/sandbox-cause.js';
import { HOSTILE, unsafeAt } from '../../helpers/hostile-text.js';
import { fakeUsernsHost, type FakeHost } from '../../helpers/userns-host.js';

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

async function diagnose(host: FakeHost): Promise<SandboxCause | null> {
  const h = await fakeUsernsHost(host);
  cleanups.push(h.cleanup);
  return diagnoseSandbox(h.facts);
}

/** bubblewrap's own words on each kind of host (bubblewrap 0.8–0.11, utils.c / bubblewrap.c). */
const BWRAP = {
  noPermission:
    'bwrap: No permissions to create a new namespace, likely because the kernel does not allow non-privileged user namespaces. See <https://deb.li/bubblewrap> or <file:///usr/share/doc/bubblewrap/README.Debian.gz>.\n',
  eperm: 'bwrap: Creating new namespace failed: Operation not permitted\n',
  enospc: 'bwrap: Creating new namespace failed: No space left on device\n',
  uidMap: 'bwrap: setting up uid map: Permission denied\n',
  loopback: 'bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted\n',
  proc: "bwrap: Can't mount proc on /newroot/proc: Operation not permitted\n",
};
const RESTRICTED = {
  '/proc/sys/kernel/apparmor_restrict_unprivileged_userns': '1\n',
  '/proc/sys/user/max_user_namespaces': '63457\n',
};
const DOCKER = {
  '/.dockerenv': '',
  '/proc/1/cgroup': '0::/\n',
  '/proc/self/status': 'Name:\tnode\nNoNewPrivs:\t0\nSeccomp:\t2\nSeccomp_filters:\t1\n',
};

describe('diagnosing a host where bubblewrap cannot run', () => {
  it('names nothing where the probe runs', async () => {
    expect(await diagnose({ files: RESTRICTED, bwrap: { stderr: '', exitCode: 0 } })).toBeNull();
  });

  it('says bubblewrap is Linux-only on another platform', async () => {
    const cause = await diagnose({ platform: 'darwin' });
    expect(cause).toMatchObject({ kind: 'platform', message: 'bubblewrap is Linux-only and this is darwin' });
  });

  it('names the install command of the package manager the host has when bwrap is missing', async () => {
    expect((await diagnose({ programs: ['apt-get'] }))?.fix).toMatch(
      /^install it: (sudo )?apt-get install bubblewrap$/,
    );
    expect((await diagnose({ programs: ['dnf'] }))?.fix).toMatch(/^install it: (sudo )?dnf install bubblewrap$/);
    expect(await diagnose({ programs: ['apk'] })).toMatchObject({
      kind: 'missing',
      message: 'bubblewrap (bwrap) is not installed',
    });
  });

  it('user.max_user_namespaces = 0: user namespaces are off; the fix is the sysctl, kept across reboots', async () => {
    const cause = await diagnose({
      files: { '/proc/sys/user/max_user_namespaces': '0\n' },
      bwrap: { stderr: BWRAP.enospc, exitCode: 1 },
    });
    expect(cause).toEqual({
      kind: 'userns-limit',
      message: 'user namespaces are switched off: user.max_user_namespaces is 0',
      fix: 'sudo sysctl -w user.max_user_namespaces=15000 (to keep it after a reboot: echo user.max_user_namespaces=15000 | sudo tee /etc/sysctl.d/90-bubblewrap.conf)',
      detail: 'bwrap: Creating new namespace failed: No space left on device',
    });
  });

  it('ENOSPC with namespaces allowed: loopfleet runs inside a sandbox that forbids nesting one', async () => {
    const cause = await diagnose({
      files: { '/proc/sys/user/max_user_namespaces': '15000\n' },
      bwrap: { stderr: BWRAP.enospc, exitCode: 1 },
    });
    expect(cause?.kind).toBe('userns-limit');
    expect(cause?.message).toMatch(
      /inside a sandbox or container that forbids nesting one, or all 15000 user namespaces are in use/,
    );
    expect(cause?.fix).toMatch(/run loopfleet outside that sandbox .*sudo sysctl -w user\.max_user_namespaces=15000/);
  });

  it('kernel.unprivileged_userns_clone = 0 (older Debian kernels): only root makes user namespaces', async () => {
    const cause = await diagnose({
      files: { '/proc/sys/kernel/unprivileged_userns_clone': '0\n' },
      bwrap: { stderr: BWRAP.noPermission, exitCode: 1 },
    });
    expect(cause).toMatchObject({
      kind: 'userns-clone',
      message: 'this kernel lets only root make user namespaces: kernel.unprivileged_userns_clone is 0',
    });
    expect(cause?.fix).toMatch(
      /^sudo sysctl -w kernel\.unprivileged_userns_clone=1 \(to keep it after a reboot: echo kernel\.unprivileged_userns_clone=1 \| sudo tee \/etc\/sysctl\.d\/90-bubblewrap\.conf\)$/,
    );
  });

  it('a process holding CAP_SYS_ADMIN is not restricted by those sysctls: they are not blamed', async () => {
    const root = { '/proc/self/status': 'Uid:\t0\t0\t0\t0\nCapEff:\t000001ffffffffff\n' };
    const clone = await diagnose({
      files: { ...root, '/proc/sys/kernel/unprivileged_userns_clone': '0\n' },
      bwrap: { stderr: BWRAP.eperm, exitCode: 1 },
    });
    expect(clone?.kind).toBe('unknown');
    const apparmor = await diagnose({
      files: { ...root, ...RESTRICTED },
      bwrap: { stderr: BWRAP.uidMap, exitCode: 1 },
    });
    expect(apparmor?.kind).toBe('unknown');
    // Without CAP_SYS_ADMIN (root in a container, an ordinary user) they are.
    const unprivileged = await diagnose({
      files: { '/proc/self/status': 'CapEff:\t00000000a80425fb\n', ...RESTRICTED },
      bwrap: { stderr: BWRAP.uidMap, exitCode: 1 },
    });
    expect(unprivileged?.kind).toBe('apparmor');
  });

  describe('Ubuntu 23.10+ (kernel.apparmor_restrict_unprivileged_userns = 1)', () => {
    const sysctlRisk =
      /or sudo sysctl -w kernel\.apparmor_restrict_unprivileged_userns=0 lifts the restriction for every program instead \(its risk: any unprivileged process may again make user namespaces/;

    it('Ubuntu 24.04 without apparmor-profiles: install the package, then install and load the profile it ships', async () => {
      const cause = await diagnose({ files: RESTRICTED, bwrap: { stderr: BWRAP.uidMap, exitCode: 1 } });
      expect(cause?.kind).toBe('apparmor');
      expect(cause?.message).toBe(
        'AppArmor lets only programs with a profile make user namespaces (kernel.apparmor_restrict_unprivileged_userns=1), and none covers /usr/bin/bwrap',
      );
      expect(cause?.fix).toContain(
        `sudo apt install apparmor-profiles && sudo install -m 0644 ${EXTRA_BWRAP_PROFILE} ${BWRAP_PROFILE} && sudo apparmor_parser -r ${BWRAP_PROFILE}`,
      );
      expect(cause?.fix).toMatch(sysctlRisk);
      expect(cause?.detail).toBe('bwrap: setting up uid map: Permission denied');
    });

    it('with apparmor-profiles installed: install and load the extra profile', async () => {
      const cause = await diagnose({
        files: { ...RESTRICTED, [EXTRA_BWRAP_PROFILE]: 'profile bwrap /usr/bin/bwrap {}\n' },
        bwrap: { stderr: BWRAP.loopback, exitCode: 1 },
      });
      expect(cause?.fix).toMatch(
        new RegExp(
          `^install and load the profile Ubuntu ships for bubblewrap: sudo install -m 0644 ${EXTRA_BWRAP_PROFILE} ${BWRAP_PROFILE} && sudo apparmor_parser -r ${BWRAP_PROFILE};`,
        ),
      );
      expect(cause?.fix).not.toContain('apt install');
    });

    it('with the profile in /etc/apparmor.d (Ubuntu 25.04+) but not in force: load it', async () => {
      const cause = await diagnose({
        files: { ...RESTRICTED, [BWRAP_PROFILE]: 'profile bwrap /usr/bin/bwrap {}\n' },
        bwrap: { stderr: BWRAP.uidMap, exitCode: 1 },
      });
      expect(cause?.fix).toMatch(
        new RegExp(
          `^load the profile Ubuntu ships for bubblewrap: sudo apparmor_parser -r ${BWRAP_PROFILE}; or sudo sysctl`,
        ),
      );
    });

    it('a bwrap outside /usr/bin is not covered by the shipped profile: PATH order, or a profile for that bwrap', async () => {
      const files = { ...RESTRICTED, [BWRAP_PROFILE]: '', '/usr/bin/bwrap': '' };
      const cause = await diagnose({ files, bwrap: { at: '/usr/local/bin/bwrap', stderr: BWRAP.uidMap, exitCode: 1 } });
      expect(cause?.message).toMatch(/none covers \/usr\/local\/bin\/bwrap$/);
      expect(cause?.fix).toMatch(
        /^the profile Ubuntu ships covers \/usr\/bin\/bwrap only: put \/usr\/bin before \/usr\/local\/bin on PATH, or give this bwrap a profile: /,
      );
      expect(cause?.fix).toContain(bwrapProfileCommand('/usr/local/bin/bwrap'));
    });

    it('a bwrap built into /usr/local only: the profile for it, not a PATH order that finds none', async () => {
      const cause = await diagnose({
        files: RESTRICTED,
        bwrap: { at: '/usr/local/bin/bwrap', stderr: BWRAP.uidMap, exitCode: 1 },
      });
      expect(cause?.fix).toMatch(
        /^the profile Ubuntu ships covers \/usr\/bin\/bwrap only: give this bwrap a profile: printf /,
      );
    });

    it('the profile command writes a profile for exactly that bwrap (run for real, without the sudo tee)', async () => {
      const bwrap = "/opt/it's here/bwrap";
      const command = bwrapProfileCommand(bwrap);
      expect(command).toMatch(
        / \| sudo tee \/etc\/apparmor\.d\/loopfleet-bwrap && sudo apparmor_parser -r \/etc\/apparmor\.d\/loopfleet-bwrap$/,
      );
      const printf = command.slice(0, command.indexOf(' | sudo tee'));
      const r = await execa('/bin/sh', ['-c', printf]);
      expect(r.stdout.split('\n')).toEqual([
        'abi <abi/4.0>,',
        'include <tunables/global>',
        `profile loopfleet-bwrap "${bwrap}" flags=(unconfined) {`,
        '  userns,',
        '}',
      ]);
    });
  });

  describe('in a container', () => {
    it('docker whose seccomp filter refuses the namespace: the security options to run it with, and --privileged with its risk', async () => {
      const cause = await diagnose({ files: DOCKER, bwrap: { stderr: BWRAP.noPermission, exitCode: 1 } });
      expect(cause).toMatchObject({
        kind: 'container',
        message: 'this runs in a docker container whose seccomp filter forbids the namespaces bubblewrap makes',
      });
      expect(cause?.fix).toBe(
        'run the container with --security-opt seccomp=unconfined --security-opt apparmor=unconfined (add --cap-add SYS_ADMIN if it still fails), or run it --privileged, which gives the container every right of the host',
      );
    });

    it('docker with a masked /proc: systempaths=unconfined as well', async () => {
      const cause = await diagnose({
        files: { ...DOCKER, '/proc/self/status': 'Seccomp:\t0\n' },
        bwrap: { stderr: BWRAP.proc, exitCode: 1 },
      });
      expect(cause?.message).toBe(
        'this runs in a docker container whose masked /proc forbids the namespaces bubblewrap makes',
      );
      expect(cause?.fix).toContain('--security-opt systempaths=unconfined');
    });

    it('podman (/run/.containerenv) and kubernetes (kubepods in /proc/1/cgroup) get their own options', async () => {
      const podman = await diagnose({
        files: { '/run/.containerenv': '' },
        bwrap: { stderr: BWRAP.eperm, exitCode: 1 },
      });
      expect(podman?.message).toBe(
        'this runs in a podman container whose security settings forbid the namespaces bubblewrap makes',
      );
      expect(podman?.fix).toMatch(/^run the container with --security-opt seccomp=unconfined, or run it --privileged/);
      const k8s = await diagnose({
        files: { '/proc/1/cgroup': '0::/kubepods/besteffort/pod1234/abcd\n' },
        bwrap: { stderr: BWRAP.eperm, exitCode: 1 },
      });
      expect(k8s?.message).toMatch(/^this runs in a kubernetes container/);
      expect(k8s?.fix).toMatch(/securityContext\.seccompProfile\.type: Unconfined/);
    });

    it('a container on an AppArmor-restricted host that made the namespace but not its uid map: the AppArmor cause', async () => {
      const cause = await diagnose({
        files: { ...DOCKER, ...RESTRICTED },
        bwrap: { stderr: BWRAP.uidMap, exitCode: 1 },
      });
      expect(cause?.kind).toBe('apparmor');
    });

    it('a container that refused the namespace on such a host: the container cause', async () => {
      const cause = await diagnose({
        files: { ...DOCKER, ...RESTRICTED },
        bwrap: { stderr: BWRAP.eperm, exitCode: 1 },
      });
      expect(cause?.kind).toBe('container');
    });
  });

  it("any other failure: bubblewrap's own last words, made safe for a terminal and one line long", async () => {
    const cause = await diagnose({
      bwrap: { stderr: `some warning\nbwrap: execvp /bin/sh: ${HOSTILE}\nsecond line\n`, exitCode: 1 },
    });
    expect(cause?.kind).toBe('unknown');
    expect(cause?.detail).toMatch(/^bwrap: execvp \/bin\/sh: /);
    expect(unsafeAt(cause!.detail!)).toBeNull();
    expect(cause!.detail).not.toContain('\n');
    expect(cause?.message).toBe(`bubblewrap fails: ${cause?.detail}`);
    expect(cause?.fix).toMatch(/^\/usr\/bin\/bwrap --unshare-user --unshare-net --ro-bind \/ \/ true shows its error/);
  });

  it('a bwrap killed before it wrote anything is still named', async () => {
    const cause = await diagnose({ bwrap: { stderr: '', exitCode: 3 } });
    expect(cause).toMatchObject({ kind: 'unknown', detail: 'exit 3, nothing on stderr' });
  });
});
