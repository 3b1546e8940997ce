import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SimpleGitAdapter } from '../../../src/adapters/git/simple-git.js';
import { authEnv, schemeOf, tokenHeader, transportConfig } from '../../../src/adapters/git/transport.js';
import { git, makeRepo, writeFiles } from '../../helpers/git-repo.js';
import { gitRecorder } from '../../helpers/process-sampler.js';

describe('the remote: push, fetch and ls-remote through the hardened path', () => {
  let root: string;
  let remote: string;
  let scratch: string;
  let cleanup: () => Promise<void>;

  beforeEach(async () => {
    ({ root, cleanup } = await makeRepo({ 'a.txt': 'one\n' }));
    scratch = await mkdtemp(join(tmpdir(), 'loopfleet-remote-'));
    remote = join(scratch, 'origin.git');
    await git(scratch, 'init', '--quiet', '--bare', remote);
    await git(root, 'remote', 'add', 'origin', remote);
  });
  afterEach(async () => {
    await cleanup();
    await rm(scratch, { recursive: true, force: true });
  });

  it('pushes a new branch under a lease that it must not exist, and refuses a stale lease without moving the ref', async () => {
    const port = new SimpleGitAdapter(root);
    expect(await port.remoteUrl('origin')).toBe(remote);
    expect(await port.remoteUrl('nope')).toBeNull();
    const head = await git(root, 'rev-parse', 'HEAD');
    expect(await port.push('origin', 'main', 'refs/heads/loop/T-1', null)).toEqual({ kind: 'pushed', commit: head });
    expect(await git(remote, 'rev-parse', 'refs/heads/loop/T-1')).toBe(head);

    // Someone else moved the branch on the remote: a push that expects it absent is refused, the ref stays.
    await writeFiles(root, { 'a.txt': 'two\n' });
    await git(root, 'commit', '-qam', 'two');
    const second = await git(root, 'rev-parse', 'HEAD');
    const refused = await port.push('origin', 'main', 'refs/heads/loop/T-1', null);
    expect(refused.kind).toBe('rejected');
    expect(await git(remote, 'rev-parse', 'refs/heads/loop/T-1')).toBe(head);
    // With the right lease it moves (a force push over the branch's own earlier commit).
    expect(await port.push(remote, 'main', 'refs/heads/loop/T-1', head)).toEqual({ kind: 'pushed', commit: second });

    const found = await port.lsRemote('origin', ['refs/heads/loop/T-1', 'refs/heads/absent']);
    expect([...found]).toEqual([['refs/heads/loop/T-1', second]]);
    await port.fetch('origin', ['+refs/heads/loop/T-1:refs/remotes/origin/loop/T-1']);
    expect(await git(root, 'rev-parse', 'refs/remotes/origin/loop/T-1')).toBe(second);
  });

  it('runs no hook of the work tree or of the repository on push (a pre-push hook is agent-written code)', async () => {
    const canary = join(scratch, 'canary');
    await writeFiles(root, { '.husky/pre-push': `#!/bin/sh\necho ran > ${canary}\n` });
    await git(root, 'config', 'core.hooksPath', '.husky');
    await git(root, 'add', '-A');
    await git(root, 'commit', '-qm', 'hooks');
    await import('node:fs/promises').then((fs) => fs.chmod(join(root, '.husky/pre-push'), 0o755));
    const port = new SimpleGitAdapter(root);
    expect((await port.push('origin', 'main', 'refs/heads/loop/T-2', null)).kind).toBe('pushed');
    await expect(stat(canary)).rejects.toThrow(/ENOENT/);
  });

  it('refuses a remote URL that would start a program (ext::, a remote helper)', async () => {
    const canary = join(scratch, 'canary');
    const port = new SimpleGitAdapter(root);
    await expect(port.push(`ext::sh -c "echo ran > ${canary}"`, 'main', 'refs/heads/x', null)).rejects.toThrow(
      /does not reach remotes through/,
    );
    await expect(port.fetch('fd::3', ['refs/heads/x'])).rejects.toThrow(/does not reach remotes through/);
    await expect(stat(canary)).rejects.toThrow(/ENOENT/);
  });

  it('refuses an unknown remote name and a ref that reads as an option, naming them', async () => {
    const port = new SimpleGitAdapter(root);
    await expect(port.push('upstream', 'main', 'refs/heads/x', null)).rejects.toThrow(/no git remote named "upstream"/);
    await expect(port.push('origin', '--mirror', 'refs/heads/x', null)).rejects.toThrow(/invalid source/);
    await expect(port.push('origin', 'main', 'loop/T-1', null)).rejects.toThrow(/full ref/);
  });

  it('allows only the URL scheme being reached, and gives a token only through the process environment', () => {
    expect(schemeOf('https://github.com/o/r.git')).toBe('https');
    expect(schemeOf('git@github.com:o/r.git')).toBe('ssh');
    expect(schemeOf('ssh://git@host:22/o/r')).toBe('ssh');
    expect(schemeOf('/srv/git/r.git')).toBe('file');
    expect(schemeOf('file:///srv/git/r.git')).toBe('file');
    expect(schemeOf('ext::sh -c x')).toBeNull();
    expect(schemeOf('foo://x')).toBeNull();
    expect(transportConfig('https://h/r')).toEqual(['protocol.https.allow=always']);
    expect(transportConfig('git@h:r', { GIT_SSH_COMMAND: 'ssh -i key' })).toEqual([
      'protocol.ssh.allow=always',
      'core.sshCommand=ssh -i key',
    ]);
    const env = authEnv(
      { urlPrefix: 'https://h/', header: tokenHeader('x-access-token', 's3cret') },
      { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'a.b', GIT_CONFIG_VALUE_0: 'c' },
    );
    expect(env.GIT_CONFIG_COUNT).toBe('2');
    expect(env.GIT_CONFIG_KEY_0).toBe('a.b');
    expect(env.GIT_CONFIG_KEY_1).toBe('http.https://h/.extraHeader');
    expect(Buffer.from(env.GIT_CONFIG_VALUE_1!.replace('Authorization: Basic ', ''), 'base64').toString()).toBe(
      'x-access-token:s3cret',
    );
  });

  it('keeps the repository config unchanged: no token or remote setting is ever written', async () => {
    const before = await readFile(join(root, '.git/config'), 'utf8');
    const port = new SimpleGitAdapter(root);
    await port.push('origin', 'main', 'refs/heads/loop/T-3', null, {
      urlPrefix: 'file://',
      header: tokenHeader('x', 'tok-123'),
    });
    expect(await readFile(join(root, '.git/config'), 'utf8')).toBe(before);
  });

  it('gives the token to no git reaching a local path, and names a URL without its password', async () => {
    const recorder = await gitRecorder();
    const path = process.env.PATH;
    process.env.PATH = `${recorder.bin}:${path ?? ''}`;
    try {
      const port = new SimpleGitAdapter(root);
      await port.push('origin', 'main', 'refs/heads/loop/T-4', null, {
        urlPrefix: 'https://github.com/',
        header: tokenHeader('x-access-token', 'tok-local-456'),
      });
      // An unreachable https remote whose URL carries a password: git is told the URL without it.
      await expect(
        port.lsRemote('https://ci:pw-sentinel-789@127.0.0.1:1/o/r.git', ['refs/heads/main']),
      ).rejects.toThrow(/ls-remote https:\/\/127\.0\.0\.1:1\/o\/r\.git failed/);
    } finally {
      process.env.PATH = path;
    }
    const records = await recorder.records();
    await recorder.cleanup();
    expect(records.some((r) => r.argv.includes('push'))).toBe(true);
    for (const r of records) {
      const all = `${r.argv.join(' ')}\n${r.environ.join('\n')}`;
      expect(all).not.toContain(Buffer.from('x-access-token:tok-local-456').toString('base64'));
      expect(r.argv.join(' ')).not.toContain('pw-sentinel-789');
    }
    // The password went as a header for that origin only, in the environment of that one process.
    const ls = records.find((r) => r.argv.includes('ls-remote'))!;
    expect(ls.environ).toContain('GIT_CONFIG_KEY_0=http.https://127.0.0.1:1/.extraHeader');
  });
});
