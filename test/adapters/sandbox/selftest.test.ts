/**
 * The self-test's probes per platform. The macOS list is checked as text against the Seatbelt rule that must
 * deny each probe, and every probe of both lists is run for real here against a runner with no sandbox at
 * all — the weakest sandbox there is — where each must report its escape and the self-test must refuse to
 * start (exit 2); under the real bubblewrap sandbox, where it runs, none may get through.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ExecaRunner } from '../../../src/adapters/sandbox/execa-runner.js';
import {
  assertSandboxHolds,
  sandboxSelfTest,
  selfTestProbes,
  type SandboxPromise,
} from '../../../src/adapters/sandbox/selftest.js';
import type { ProbeTargets } from '../../../src/adapters/sandbox/selftest-probes.js';
import { UsageError } from '../../../src/domain/errors.js';
import type { ProcessRunner, RunOptions, RunResult } from '../../../src/ports/process.js';

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

/** Runs every command for real, ignoring the sandbox it is asked for: a sandbox weakened to nothing. */
class UnconfinedRunner implements ProcessRunner {
  readonly #inner = new ExecaRunner();
  run(command: string, options: RunOptions): Promise<RunResult> {
    return this.#inner.run(command, { ...options, sandbox: null });
  }
  async sandboxAvailable(): Promise<boolean> {
    return true;
  }
}

const TARGETS: ProbeTargets = {
  hostDir: '/var/tmp/loopfleet-selftest-x',
  hostTmp: '/tmp/loopfleet-selftest-tmp-x',
  written: '.loopfleet-selftest-write-tok',
  canaries: [
    { file: '/Users/me/.loopfleet-selftest-1', token: 'tok', in: 'home' },
    { file: '/var/tmp/loopfleet-selftest-x/canary', token: 'tok', in: 'tmp' },
  ],
  homes: ['/Users/me'],
  socket: '/var/tmp/loopfleet-selftest-x/s.sock',
  abstract: null,
  tcp: { host: '127.0.0.1', port: 40999 },
  systemSockets: ['/var/run/mDNSResponder', '/var/run/com.docker.vmnetd.sock'],
};

describe('the self-test probes per platform', () => {
  it('Linux keeps its attacks: uid 0, capabilities, remount, writes, homes, host /tmp, host sockets, a TCP port not allowed', () => {
    expect(selfTestProbes('linux').map((p) => [p.id, p.promise])).toEqual([
      ['uid-0', 'no-privilege'],
      ['capabilities', 'no-privilege'],
      ['remount', 'no-privilege'],
      ['write-outside', 'writes-only-worktree'],
      ['read-home', 'homes-hidden'],
      ['read-host-tmp', 'host-tmp-hidden'],
      ['see-socket', 'sockets-unreachable'],
      ['connect-socket', 'sockets-unreachable'],
      ['connect-host', 'network-only-proxy'],
    ]);
  });

  it('macOS: write to ~, write outside the worktree, read ~ and ~/.ssh, connect to a host not allowed, reach a socket in /var/run', () => {
    expect(selfTestProbes('darwin').map((p) => [p.id, p.promise])).toEqual([
      ['write-home', 'writes-only-worktree'],
      ['write-outside', 'writes-only-worktree'],
      ['read-home', 'homes-hidden'],
      ['connect-host', 'network-only-proxy'],
      ['connect-socket', 'sockets-unreachable'],
    ]);
  });

  // Which Seatbelt rule denies each promise, and the action a probe of that promise must attempt.
  const SEATBELT: Record<
    Exclude<SandboxPromise, 'no-privilege' | 'host-tmp-hidden'>,
    { operation: string; action: RegExp }
  > = {
    'writes-only-worktree': { operation: 'file-write*', action: /\( : > "\$d\/"'\.loopfleet-selftest-write-tok' \)/ },
    'homes-hidden': {
      operation: 'file-read*',
      action: /grep -qs 'tok' '\/Users\/me\/\.loopfleet-selftest-1'|ls -A '\/Users\/me\/\.ssh'/,
    },
    'network-only-proxy': {
      operation: 'network-outbound (remote ip)',
      action: /require\(.{1,6}net.{1,6}\)\.connect\(t\)/,
    },
    'sockets-unreachable': {
      operation: 'network-outbound (remote unix-socket)',
      action: /require\(.{1,6}net.{1,6}\)\.connect\(t\)/,
    },
  };

  it.each(selfTestProbes('darwin').map((p) => [p.id, p] as const))(
    'macOS probe %s attempts what its Seatbelt rule denies, on the targets planted',
    (_id, probe) => {
      const rule = SEATBELT[probe.promise as keyof typeof SEATBELT];
      expect(rule).toBeDefined();
      expect(probe.deniedBy).toContain(rule.operation);
      const script = probe.script(TARGETS).join('\n');
      expect(script).toMatch(rule.action);
      expect(script).toContain('ESCAPED:');
      const mentioned: Record<string, string[]> = {
        'write-home': ["'/Users/me'"],
        'write-outside': ["'/'", "'/etc'", "'/usr/local'", `'${TARGETS.hostTmp}'`, `'${TARGETS.hostDir}'`],
        'read-home': [TARGETS.canaries[0]!.file, '/Users/me/.ssh'],
        'connect-host': ['"host":"127.0.0.1","port":40999'],
        'connect-socket': ['/var/run/mDNSResponder', '/var/run/com.docker.vmnetd.sock', TARGETS.socket],
      };
      for (const m of mentioned[probe.id]!) expect(script).toContain(m);
    },
  );

  it('has no probes for a platform without a sandbox', () => {
    expect(() => selfTestProbes('win32')).toThrow(
      'the sandbox self-test has no probes for win32: loopfleet sandboxes Linux and macOS only',
    );
  });
});

/** A home with a ~/.ssh, and a /var/run with a listening socket, both in temp folders; counts connections. */
async function fakeHost(): Promise<{
  home: string;
  socketFolder: string;
  systemSocket: string;
  accepted: () => number;
}> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'lf-selftest-host-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const home = path.join(dir, 'home');
  await mkdir(path.join(home, '.ssh'), { recursive: true });
  await writeFile(path.join(home, '.ssh', 'id_ed25519'), 'not a key\n');
  const socketFolder = path.join(dir, 'run');
  await mkdir(socketFolder);
  const systemSocket = path.join(socketFolder, 'mDNSResponder');
  let accepted = 0;
  const server = net.createServer((s) => {
    accepted++;
    s.destroy();
  });
  await new Promise<void>((resolve) => server.listen(systemSocket, resolve));
  cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
  return { home, socketFolder, systemSocket, accepted: () => accepted };
}

describe('the self-test against a sandbox weakened to nothing', () => {
  it('macOS probes: every one reports its escape, and loopfleet refuses to start (exit 2)', {
    timeout: 60_000,
  }, async () => {
    const host = await fakeHost();
    const options = { platform: 'darwin', homes: [host.home], socketFolder: host.socketFolder };
    const failures = await sandboxSelfTest(new UnconfinedRunner(), options);
    const text = failures.join('\n');
    expect(text).toContain(`wrote to ${host.home}`); // write-home
    expect(text).toMatch(/wrote to \/var\/tmp\/loopfleet-selftest-|wrote to \/tmp\/loopfleet-selftest-/); // write-outside
    expect(text).toContain(`a file written inside appeared in ${host.home}`);
    expect(text).toMatch(new RegExp(`read ${host.home}/\\.loopfleet-selftest-`)); // read-home
    expect(text).toContain(`listed ${host.home}/.ssh`);
    expect(text).toMatch(/connected to 127\.0\.0\.1:\d+/); // connect-host
    expect(text).toMatch(
      /a host TCP port no network: entry allows \(127\.0\.0\.1:\d+\) accepted a connection from inside/,
    );
    expect(text).toContain(`connected to ${host.systemSocket}`); // connect-socket
    expect(host.accepted()).toBeGreaterThan(0);
    expect(text).toContain('a host Unix socket accepted a connection from inside');

    const refused = await assertSandboxHolds(new UnconfinedRunner(), options).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(UsageError);
    expect((refused as UsageError).exitCode).toBe(2);
    expect((refused as Error).message).toMatch(
      /^the sandbox is weaker than promised, so loopfleet does not start: .*listed .*\/\.ssh/,
    );
    expect((refused as Error).message).toMatch(
      /Update loopfleet and macOS \(sandbox-exec's Seatbelt enforces the policy\), or write `sandbox: off`/,
    );
  });

  it.runIf(process.platform === 'linux')(
    'Linux probes: every one reports its escape, and loopfleet refuses to start (exit 2)',
    { timeout: 60_000 },
    async () => {
      const host = await fakeHost();
      const options = { platform: 'linux', homes: [host.home] };
      const failures = await sandboxSelfTest(new UnconfinedRunner(), options);
      const text = failures.join('\n');
      if (process.getuid?.() === 0) {
        expect(text).toContain('the command runs as uid 0');
        expect(text).toMatch(/the command holds capabilities \(CapEff: [0-9a-f]+\)/);
      }
      expect(text).toMatch(/wrote to \/var\/tmp\/loopfleet-selftest-|wrote to \/tmp\/loopfleet-selftest-/);
      expect(text).toMatch(new RegExp(`read ${host.home}/\\.loopfleet-selftest-`));
      expect(text).toMatch(/read \/(var\/)?tmp\/loopfleet-selftest-.*\/canary/);
      expect(text).toMatch(/the host socket .*s\.sock is visible/);
      expect(text).toMatch(/connected to @loopfleet-selftest-[0-9a-f]+/);
      expect(text).toContain('a host Unix socket accepted a connection from inside');
      expect(text).toMatch(/connected to 127\.0\.0\.1:\d+/);
      // Linux does not attack the sockets of /var/run by name: they are not mounted at all.
      expect(host.accepted()).toBe(0);

      const refused = await assertSandboxHolds(new UnconfinedRunner(), options).catch((e: unknown) => e);
      expect((refused as UsageError).exitCode).toBe(2);
      expect((refused as Error).message).toMatch(
        /Install a current bubblewrap on a kernel with user namespaces, or write `sandbox: off`/,
      );
    },
  );
});

const available = await new ExecaRunner().sandboxAvailable();

// Here bubblewrap, on a macOS runner Seatbelt: the macOS probes must fail under both.
describe.runIf(available)('the self-test in the real sandbox', () => {
  it('none of the macOS probes gets through a sandbox that denies what Seatbelt denies', {
    timeout: 60_000,
  }, async () => {
    const host = await fakeHost();
    expect(
      await sandboxSelfTest(new ExecaRunner(), {
        platform: 'darwin',
        homes: [host.home],
        socketFolder: host.socketFolder,
      }),
    ).toEqual([]);
    expect(host.accepted()).toBe(0);
  });

  it.runIf(process.platform === 'linux')(
    'the Linux probes pass, the TCP port not allowed included',
    { timeout: 60_000 },
    async () => {
      expect(await sandboxSelfTest(new ExecaRunner(), { platform: 'linux' })).toEqual([]);
    },
  );
});
