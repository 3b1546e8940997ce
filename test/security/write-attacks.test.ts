/**
 * loopfleet's own file writes in folders an agent can write (a worktree, its admin folder) never follow a
 * link the agent left there: real git worktrees, real bubblewrap, a host canary outside every worktree.
 */
import { execFile } from 'node:child_process';
import { lstat, mkdir, mkdtemp, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ExecaRunner } from '../../src/adapters/sandbox/execa-runner.js';
import { FsWorkspace } from '../../src/adapters/workspace/fs-workspace.js';
import { SimpleGitAdapter } from '../../src/adapters/git/simple-git.js';
import { SANDBOX_OBJECTS } from '../../src/adapters/git/layout.js';
import { RefusedError } from '../../src/domain/errors.js';
import { copyIncluded, linkDependencies } from '../../src/adapters/workspace/worktree-files.js';

const exec = promisify(execFile);
const env = {
  ...process.env,
  GIT_AUTHOR_NAME: 'P',
  GIT_AUTHOR_EMAIL: 'p@p',
  GIT_COMMITTER_NAME: 'P',
  GIT_COMMITTER_EMAIL: 'p@p',
};
const git = async (cwd: string, ...args: string[]) => (await exec('git', args, { cwd, env })).stdout.trim();
const runner = new ExecaRunner();
const available = await runner.sandboxAvailable();

let temps: string[] = [];
afterEach(async () => {
  for (const t of temps) await rm(t, { recursive: true, force: true });
  temps = [];
});

async function write(file: string, content: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, content);
}

describe('loopfleet never writes through a link an agent left', () => {
  let root: string;
  let wt: string;
  let canary: string;

  beforeEach(async () => {
    // /var/tmp: outside the worktree and outside the sandbox's view.
    const host = await mkdtemp('/var/tmp/lf-canary-');
    canary = path.join(host, 'canary');
    await writeFile(canary, 'host data\n');
    root = await mkdtemp(path.join(os.tmpdir(), 'lf-writes-'));
    temps.push(host, root);
    await git(root, 'init', '-q', '-b', 'main');
    await write(path.join(root, '.gitignore'), 'node_modules/\n.env\n');
    await write(path.join(root, 'package-lock.json'), '{"lockfileVersion":3}\n');
    await git(root, 'add', '-A');
    await git(root, 'commit', '-qm', 'init');
    await write(path.join(root, 'node_modules/pkg/index.js'), 'module.exports = 1;\n');
    const adapter = new SimpleGitAdapter(root);
    await adapter.ensureExcluded('/.loop-worktrees/');
    wt = path.join(adapter.root, '.loop-worktrees', 'T-1');
    await adapter.addWorktree(wt, 'loop/T-1', 'main');
  });

  it('the reflink probe is made in a folder of its own, not through a committed link named like it', async () => {
    // The agent's branch holds a link named like the probe of this very process.
    await symlink(canary, path.join(wt, `.loopfleet-reflink-probe-${process.pid}`));
    await git(wt, 'add', '-A');
    await git(wt, 'commit', '-qm', 'probe link');

    const prepared = await new FsWorkspace(path.join(root, '.loop-worktrees')).prepare(root, wt);
    expect(prepared.deps.method).not.toBe('none');
    expect(await readFile(canary, 'utf8')).toBe('host data\n');
    expect(await readlink(path.join(wt, `.loopfleet-reflink-probe-${process.pid}`))).toBe(canary);
    expect(await readFile(path.join(wt, 'node_modules/pkg/index.js'), 'utf8')).toBe('module.exports = 1;\n');
  });

  it('a .worktreeinclude copy whose target or folder is a link in the branch is not written through', async () => {
    await write(path.join(root, '.env'), 'SECRET=1\n');
    await write(path.join(root, 'config/.env'), 'NESTED=1\n');
    await write(path.join(root, '.worktreeinclude'), '.env\nconfig/.env\n');
    await symlink(canary, path.join(wt, '.env'));
    await git(wt, 'add', '-f', '.env');
    await git(wt, 'commit', '-qm', 'env link');
    await copyIncluded(root, wt);
    expect(await readFile(canary, 'utf8')).toBe('host data\n');

    await rm(path.join(wt, 'config'), { recursive: true, force: true });
    await symlink(path.dirname(canary), path.join(wt, 'config'));
    await expect(copyIncluded(root, wt)).rejects.toThrow(RefusedError);
    await expect(lstat(path.join(path.dirname(canary), '.env'))).rejects.toThrow(/ENOENT/);
  });

  it('a dependency folder below a link is refused, not cloned outside the worktree', async () => {
    await write(path.join(root, 'packages/a/package.json'), '{}\n');
    await write(path.join(root, 'packages/a/node_modules/dep/index.js'), '1\n');
    await symlink(path.dirname(canary), path.join(wt, 'packages'));
    await expect(linkDependencies(root, wt, ['packages/a/node_modules'])).rejects.toThrow(/packages is a link/);
    await expect(lstat(path.join(path.dirname(canary), 'a'))).rejects.toThrow(/ENOENT/);
  });

  it.runIf(available)(
    "links left in the worktree's admin folder by a sandboxed command are replaced, not written through",
    async () => {
      const admin = path.resolve(wt, await git(wt, 'rev-parse', '--git-dir'));
      const sandbox = { writable: [wt] };
      const first = await runner.run('true', { cwd: wt, env: { PATH: '/usr/bin:/bin' }, timeoutMs: 20_000, sandbox });
      expect(first.exitCode).toBe(0);
      // Inside the sandbox the admin folder is writable: the agent swaps loopfleet's own files for links.
      const attack = [
        `ln -sfn ${canary} ${admin}/loopfleet-commondir`,
        `rm -rf ${admin}/${SANDBOX_OBJECTS}/info && ln -sfn ${path.dirname(canary)} ${admin}/${SANDBOX_OBJECTS}/info`,
        `ln -sfn ${canary} ${admin}/config.worktree.tmp && mv -T ${admin}/config.worktree.tmp ${admin}/config.worktree || true`,
      ].join(' && ');
      const run = await runner.run(attack, { cwd: wt, env: { PATH: '/usr/bin:/bin' }, timeoutMs: 20_000, sandbox });
      expect(run.exitCode, run.output).toBe(0);
      expect((await lstat(path.join(admin, 'loopfleet-commondir'))).isSymbolicLink()).toBe(true);

      const next = await runner.run('git status --short >/dev/null && echo ok', {
        cwd: wt,
        env: { PATH: '/usr/bin:/bin' },
        timeoutMs: 20_000,
        sandbox,
      });
      expect(next.output).toContain('ok');
      expect(await readFile(canary, 'utf8')).toBe('host data\n');
      await expect(lstat(path.join(path.dirname(canary), 'alternates'))).rejects.toThrow(/ENOENT/);
      expect((await lstat(path.join(admin, 'loopfleet-commondir'))).isFile()).toBe(true);
    },
  );
});
