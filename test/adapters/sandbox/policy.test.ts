/**
 * One policy, two enforcers, row by row: for a fixed policy (a real repository with a linked worktree, a
 * writable folder, a tool chain on PATH, a CA bundle, a CLI's config copy, the egress socket, an fsmonitor
 * socket in .git), every row is asserted in bubblewrap's arguments AND in sandbox-runtime's settings (the
 * macOS Seatbelt profile's source), what must be denied included, so the two renderings cannot drift.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bwrapArgs } from '../../../src/adapters/sandbox/bwrap.js';
import {
  DARWIN_FACTS,
  machineFacts,
  SHADOW_GIT_DIR,
  type PolicyRow,
  type SandboxPolicy,
} from '../../../src/adapters/sandbox/policy.js';
import {
  SRT_SHARED_TMP,
  srtEnvironment,
  srtSettings,
  type SrtSettings,
} from '../../../src/adapters/sandbox/srt-settings.js';
import { isInside } from '../../../src/adapters/fs/paths.js';
import { policyFixture, type PolicyFixture } from '../../helpers/policy-fixture.js';

let dir: string;
let repo: string;
let worktree: string;
let policy: SandboxPolicy;
let args: string[];
let settings: SrtSettings;
let fixture: PolicyFixture;
const extras = { proxyPort: 40123, privateTmp: '/private-tmp-of-the-command', enforcerPaths: ['/srt/vendor'] };

beforeAll(async () => {
  fixture = await policyFixture();
  ({ policy, dir, repo, worktree } = fixture);
  args = bwrapArgs(policy);
  settings = srtSettings(policy, extras);
});

afterAll(async () => {
  await fixture.close();
});

/** Index of `seq` as consecutive arguments, or -1. */
function at(seq: string[]): number {
  for (let i = 0; i + seq.length <= args.length; i++) if (seq.every((a, j) => args[i + j] === a)) return i;
  return -1;
}

/** Every bind's destination, with its index. */
function binds(): Array<{ dest: string; index: number }> {
  const out: Array<{ dest: string; index: number }> = [];
  args.forEach((a, i) => {
    if (a === '--bind' || a === '--ro-bind') out.push({ dest: args[i + 2]!, index: i });
    if (a === '--tmpfs' || a === '--symlink') out.push({ dest: args[i + (a === '--symlink' ? 2 : 1)]!, index: i });
  });
  return out;
}

const rowsOf = (access: PolicyRow['access']) => policy.rows.filter((r) => r.access === access);

describe('the policy holds every row bubblewrap enforced', () => {
  it('names each promise as a row, with why', () => {
    const find = (p: string, access: PolicyRow['access']) =>
      policy.rows.find((r) => r.path === p && r.access === access);
    expect(find('/usr', 'read')).toBeDefined();
    expect(find('/etc', 'read')).toBeDefined();
    expect(policy.rows.some((r) => r.access === 'hidden' && r.cover === 'empty-file' && r.path === '/etc/shadow')).toBe(
      true,
    );
    expect(find(path.join(dir, 'tools', 'bin'), 'read')).toBeDefined();
    expect(find(path.join(dir, 'tools', 'lib'), 'read')).toBeDefined();
    expect(find(worktree, 'write')).toBeDefined();
    expect(find(path.join(dir, 'extra'), 'write')).toBeDefined();
    expect(find(path.join(repo, '.git'), 'read')).toBeDefined();
    expect(find(SHADOW_GIT_DIR, 'read')).toBeDefined();
    expect(find(path.join(SHADOW_GIT_DIR, 'objects'), 'write')).toBeDefined();
    const admin = path.join(repo, '.git', 'worktrees', 'wt');
    expect(find(admin, 'write')).toBeDefined();
    for (const f of ['HEAD', 'gitdir', 'config.worktree', 'commondir'])
      expect(find(path.join(admin, f), 'read-only-over-writable')).toBeDefined();
    expect(find(path.join(worktree, '.git'), 'read-only-over-writable')).toBeDefined();
    for (const h of ['/root', '/home', '/run', '/var', '/tmp', '/srv', '/mnt', '/media'])
      expect(find(h, 'hidden'), h).toBeDefined();
    expect(find(path.join(dir, 'ca.pem'), 'read')).toBeDefined();
    expect(find('/tmp/.loopfleet/egress.sock', 'proxy-socket')).toBeDefined();
    expect(find('/root/.claude', 'write')).toMatchObject({ source: path.join(dir, 'config-copy', '.claude') });
    expect(
      policy.rows.some((r) => r.access === 'hidden' && r.path === path.join(repo, '.git', 'fsmonitor--daemon.ipc')),
    ).toBe(true);
    expect(policy.network).toEqual({ proxySocket: path.join(dir, 'egress.sock'), allowedHosts: ['api.anthropic.com'] });
    expect(policy.process).toMatchObject({ uid: 65534, capabilities: 'none' });
    expect(policy.process.namespaces).toEqual(expect.arrayContaining(['user', 'pid', 'ipc', 'net']));
    for (const r of policy.rows) expect(r.why.length, JSON.stringify(r)).toBeGreaterThan(3);
  });

  it('is computed with the facts of the platform passed in', () => {
    expect(machineFacts('darwin')).toBe(DARWIN_FACTS);
    expect(machineFacts('linux')).toEqual({});
    expect(DARWIN_FACTS.hiddenRoots).toEqual(
      expect.arrayContaining(['/Users', '/private/var', '/private/tmp', '/Volumes']),
    );
  });
});

describe('row by row: bubblewrap arguments and sandbox-runtime settings', () => {
  it('read: bound read-only; readable under srt and not writable', () => {
    for (const row of rowsOf('read')) {
      if (row.access !== 'read') continue;
      expect(at(['--ro-bind', row.source, row.path]), row.path).toBeGreaterThanOrEqual(0);
      const shown = row.source !== row.path ? row.source : row.path;
      expect(settings.filesystem.allowRead, row.path).toContain(shown);
      // Writable only when a write row encloses it (the shared .git is not inside one).
      const enclosed = rowsOf('write').some((w) => w.access === 'write' && isInside(row.path, w.path));
      if (!enclosed)
        expect(
          settings.filesystem.allowWrite.some((w) => (isInside(shown, w) && !isInside(w, shown)) || w === shown),
          row.path,
        ).toBe(false);
    }
  });

  it('write: bound read-write; writable under srt — at the source when bubblewrap shows it elsewhere', () => {
    for (const row of rowsOf('write')) {
      if (row.access !== 'write') continue;
      expect(at(['--bind', row.source, row.path]), row.path).toBeGreaterThanOrEqual(0);
      expect(settings.filesystem.allowWrite).toContain(row.source);
      if (row.source !== row.path)
        expect(settings.filesystem.allowWrite, `${row.path} is the person's own`).not.toContain(row.path);
    }
  });

  it('read-only-over-writable: bound read-only after the writable folder it lies in; denied writing under srt', () => {
    const rows = rowsOf('read-only-over-writable');
    expect(rows.length).toBe(5);
    for (const row of rows) {
      if (row.access !== 'read-only-over-writable') continue;
      const index = at(['--ro-bind', row.source, row.path]);
      expect(index, row.path).toBeGreaterThanOrEqual(0);
      const outer = binds().filter((b) => b.dest !== row.path && isInside(row.path, b.dest));
      for (const b of outer) expect(b.index, `${b.dest} before ${row.path}`).toBeLessThan(index);
      expect(settings.filesystem.denyWrite).toContain(row.path);
      expect(settings.filesystem.allowWrite.some((w) => isInside(row.path, w))).toBe(true);
    }
  });

  it('hidden: not bound (absent), /dev/null over it (file) or an empty tmpfs (folder); denied reading under srt', () => {
    for (const row of rowsOf('hidden')) {
      if (row.access !== 'hidden') continue;
      if (row.cover === 'absent') {
        // Nothing of the host at it: only the sandbox's own tmpfs (/tmp) and rows deeper than it are bound there.
        for (const b of binds()) {
          if (b.dest === row.path) expect(args[b.index], row.path).toBe('--tmpfs');
          if (isInside(row.path, b.dest) && b.dest !== row.path && b.dest !== '/')
            throw new Error(`${row.path} is inside bound ${b.dest}`);
        }
      } else if (row.cover === 'empty-file') {
        expect(at(['--ro-bind', '/dev/null', row.path]), row.path).toBeGreaterThanOrEqual(0);
      } else {
        expect(at(['--tmpfs', row.path]), row.path).toBeGreaterThanOrEqual(0);
      }
      if (isInside(row.path, '/tmp/.loopfleet')) expect(settings.filesystem.denyRead).not.toContain(row.path);
      else expect(settings.filesystem.denyRead, row.path).toContain(row.path);
    }
  });

  it('link: the same link; its own path readable under srt', () => {
    const rows = rowsOf('link');
    for (const row of rows) {
      if (row.access !== 'link') continue;
      expect(at(['--symlink', row.target, row.path])).toBeGreaterThanOrEqual(0);
      expect(settings.filesystem.allowRead).toContain(row.path);
    }
  });

  it("private: /proc, /dev, /tmp and HOME of its own; under srt /dev readable, TMPDIR and HOME the command's own folder", () => {
    expect(at(['--proc', '/proc'])).toBe(0);
    expect(at(['--dev', '/dev'])).toBe(2);
    expect(at(['--tmpfs', '/tmp'])).toBe(4);
    expect(at(['--dir', '/root', '--setenv', 'HOME', '/root'])).toBe(6);
    expect(settings.filesystem.allowRead).toContain('/dev');
    expect(settings.filesystem.allowRead).not.toContain('/proc');
    expect(settings.filesystem.allowRead).toContain(extras.privateTmp);
    expect(settings.filesystem.allowWrite).toContain(extras.privateTmp);
    const env = srtEnvironment(policy, extras);
    expect(env.TMPDIR).toBe(extras.privateTmp);
    // The config copy's root: ~/.claude is found there as `.claude`.
    expect(env.HOME).toBe(path.join(dir, 'config-copy'));
    expect(env.GIT_OBJECT_DIRECTORY).toBe(path.join(repo, '.git', 'worktrees', 'wt', 'loopfleet-objects'));
    expect(env.GIT_ALTERNATE_OBJECT_DIRECTORIES).toBe(path.join(repo, '.git', 'objects'));
    expect(env.NO_PROXY).toBeNull();
  });

  it('proxy-socket: bound read-only into the sandbox; under srt the proxy port, and no Unix socket at all', () => {
    expect(at(['--ro-bind', path.join(dir, 'egress.sock'), '/tmp/.loopfleet/egress.sock'])).toBeGreaterThanOrEqual(0);
    expect(settings.network).toEqual({
      allowedDomains: [],
      deniedDomains: [],
      httpProxyPort: extras.proxyPort,
      socksProxyPort: extras.proxyPort,
      allowUnixSockets: [],
      allowAllUnixSockets: false,
      allowLocalBinding: false,
    });
    expect(JSON.stringify(settings)).not.toContain('egress.sock');
  });

  it('the process: nobody, no capabilities, namespaces of its own (no network but loopback); srt: no pty, no weaker modes', () => {
    const tail = args.slice(args.indexOf('--remount-ro'));
    expect(tail).toEqual([
      '--remount-ro',
      '/',
      '--unshare-user',
      '--uid',
      '65534',
      '--gid',
      '65534',
      '--cap-drop',
      'ALL',
      '--unshare-pid',
      '--unshare-ipc',
      '--unshare-uts',
      '--unshare-cgroup-try',
      '--unshare-net',
      '--die-with-parent',
      '--new-session',
      '--chdir',
      worktree,
    ]);
    expect(settings).toMatchObject({
      allowPty: false,
      enableWeakerNestedSandbox: false,
      enableWeakerNetworkIsolation: false,
    });
  });

  it('nothing else: reading is deny-by-default under srt, and only rows (and the enforcer) are readable or writable', () => {
    expect(settings.filesystem.denyRead[0]).toBe('/');
    const named = new Set<string>([extras.privateTmp, ...extras.enforcerPaths]);
    for (const r of policy.rows) {
      named.add(r.path);
      if ('source' in r) named.add(r.source);
    }
    for (const p of settings.filesystem.allowRead) expect(named.has(p), p).toBe(true);
    const writable = new Set<string>([
      extras.privateTmp,
      ...policy.rows.filter((r) => r.access === 'write').map((r) => (r as { source: string }).source),
    ]);
    for (const p of settings.filesystem.allowWrite) expect(writable.has(p), p).toBe(true);
    // sandbox-runtime's own shared folder is never writable.
    for (const p of SRT_SHARED_TMP) expect(settings.filesystem.denyWrite).toContain(p);
    // Every bwrap bind is a row.
    for (const b of binds())
      expect(
        policy.rows.some((r) => r.path === b.dest),
        b.dest,
      ).toBe(true);
  });
});
