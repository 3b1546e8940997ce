import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { sandboxPolicy, type SandboxPolicy } from '../../src/adapters/sandbox/policy.js';
import { git, makeRepo } from './git-repo.js';

export interface PolicyFixture {
  policy: SandboxPolicy;
  dir: string;
  repo: string;
  worktree: string;
  close(): Promise<void>;
}

/**
 * A fixed policy over real folders: a repository with a linked worktree and an fsmonitor socket in its
 * `.git`, a writable folder, a tool chain on PATH (bin and lib), a CA bundle, a CLI's config copy shown at
 * HOME/.claude, and the egress proxy's socket.
 */
export async function policyFixture(): Promise<PolicyFixture> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'loopfleet-policy-'));
  const made = await makeRepo({ 'README.md': 'hi\n' });
  const worktree = path.join(dir, 'wt');
  await git(made.root, 'worktree', 'add', '--quiet', '-b', 'loop/T-1', worktree);
  const servers: net.Server[] = [];
  const listen = (p: string) =>
    new Promise<void>((resolve) => {
      const s = net.createServer();
      servers.push(s);
      s.listen(p, () => resolve());
    });
  await listen(path.join(made.root, '.git', 'fsmonitor--daemon.ipc'));
  await listen(path.join(dir, 'egress.sock'));
  await mkdir(path.join(dir, 'extra'));
  await mkdir(path.join(dir, 'config-copy', '.claude'), { recursive: true });
  await mkdir(path.join(dir, 'tools', 'bin'), { recursive: true });
  await mkdir(path.join(dir, 'tools', 'lib'));
  await writeFile(path.join(dir, 'ca.pem'), 'a CA\n');
  const policy = await sandboxPolicy({
    cwd: worktree,
    writable: [path.join(dir, 'extra')],
    env: {
      PATH: `${path.join(dir, 'tools', 'bin')}:/usr/bin:/bin`,
      HOME: '/root',
      NODE_EXTRA_CA_CERTS: path.join(dir, 'ca.pem'),
    },
    home: '/root',
    mounts: [
      { src: path.join(dir, 'config-copy', '.claude'), dest: '/root/.claude', readOnly: false },
      { src: path.join(dir, 'egress.sock'), dest: '/tmp/.loopfleet/egress.sock', readOnly: true },
    ],
    allowedHosts: ['api.anthropic.com'],
  });
  return {
    policy,
    dir,
    repo: made.root,
    worktree,
    close: async () => {
      for (const s of servers) s.close();
      await made.cleanup();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
