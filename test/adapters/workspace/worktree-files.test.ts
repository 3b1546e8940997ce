import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { RefusedError } from '../../../src/domain/errors.js';
import { SimpleGitAdapter } from '../../../src/adapters/git/simple-git.js';
import { copyIncluded, linkDependencies } from '../../../src/adapters/workspace/worktree-files.js';

const exec = promisify(execFile);
const env = {
  ...process.env,
  GIT_AUTHOR_NAME: 'P',
  GIT_AUTHOR_EMAIL: 'p@p',
  GIT_COMMITTER_NAME: 'P',
  GIT_COMMITTER_EMAIL: 'p@p',
};
const temps: string[] = [];
afterAll(async () => {
  for (const dir of temps) await rm(dir, { recursive: true, force: true });
});

async function git(cwd: string, ...args: string[]): Promise<string> {
  return (await exec('git', args, { cwd, env })).stdout;
}

async function write(file: string, content: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, content);
}

describe('worktree files', () => {
  let root: string;
  let adapter: SimpleGitAdapter;
  let wt: string;

  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'lf-wtf-'));
    temps.push(root);
    await git(root, 'init', '-q', '-b', 'main');
    await write(
      path.join(root, '.gitignore'),
      ['.env', '*.local', 'config/secrets/', 'node_modules/', 'dist/', 'logs/'].join('\n'),
    );
    await write(path.join(root, 'package.json'), '{"name":"x"}\n');
    await write(path.join(root, 'package-lock.json'), '{"lockfileVersion":3}\n');
    await git(root, 'add', '-A');
    await git(root, 'commit', '-qm', 'init');
    adapter = new SimpleGitAdapter(root);
    await adapter.ensureExcluded('/.loop-worktrees/');
    wt = path.join(adapter.root, '.loop-worktrees', 'T-1');
    await adapter.addWorktree(wt, 'loop/T-1', 'main');
  });

  it('copies the ignored files the patterns select, with their modes, and they are never committed', async () => {
    await write(path.join(root, '.env'), 'SECRET=1\n');
    await chmod(path.join(root, '.env'), 0o600);
    await write(path.join(root, 'app/.env'), 'NESTED=1\n');
    await write(path.join(root, 'settings.local'), 'local\n');
    await write(path.join(root, 'config/secrets/key.pem'), 'pem\n');
    await write(path.join(root, 'dist/bundle.js'), 'not selected\n');
    await write(path.join(root, 'logs/keep.local'), 'negated\n');
    await write(path.join(root, 'node_modules/pkg/.env'), 'never searched\n');
    await write(path.join(root, 'untracked.env.txt'), 'not ignored, not copied\n');
    await write(
      path.join(root, '.worktreeinclude'),
      ['# secrets', '.env', '*.local', '!logs/keep.local', 'config/secrets/'].join('\n'),
    );

    const copied = await copyIncluded(root, wt);
    expect(copied).toEqual(['.env', 'app/.env', 'config/secrets/key.pem', 'settings.local']);
    expect(await readFile(path.join(wt, '.env'), 'utf8')).toBe('SECRET=1\n');
    expect((await stat(path.join(wt, '.env'))).mode & 0o777).toBe(0o600);
    expect(await readFile(path.join(wt, 'config/secrets/key.pem'), 'utf8')).toBe('pem\n');
    expect(existsSync(path.join(wt, 'dist/bundle.js'))).toBe(false);
    expect(existsSync(path.join(wt, 'logs/keep.local'))).toBe(false);
    expect(existsSync(path.join(wt, 'node_modules'))).toBe(false);

    // A second run keeps the worktree's copies (an agent may have edited them) and reports them again.
    await write(path.join(wt, '.env'), 'EDITED=1\n');
    expect(await copyIncluded(root, wt)).toEqual(copied);
    expect(await readFile(path.join(wt, '.env'), 'utf8')).toBe('EDITED=1\n');

    await write(path.join(wt, 'src/feature.ts'), 'export {};\n');
    const commit = (await adapter.commitSnapshot(wt, 'T-1: feature', copied)).commit;
    const files = (await git(wt, 'show', '--name-only', '--format=', commit ?? '')).trim().split('\n');
    expect(files).toEqual(['src/feature.ts']);
  });

  it('copies nothing without a .worktreeinclude, and searches node_modules only when named', async () => {
    await write(path.join(root, '.env'), 'x\n');
    expect(await copyIncluded(root, wt)).toEqual([]);
    await write(path.join(root, 'node_modules/.cache/token.local'), 't\n');
    await write(path.join(root, '.worktreeinclude'), 'node_modules/.cache/*.local\n');
    expect(await copyIncluded(root, wt)).toEqual(['node_modules/.cache/token.local']);
  });

  it('refuses a selected file that links outside the repository, copying nothing', async () => {
    const outside = await mkdtemp(path.join(os.tmpdir(), 'lf-outside-'));
    temps.push(outside);
    await write(path.join(outside, 'secret'), 'outside\n');
    await write(path.join(root, 'a.local'), 'fine\n');
    await symlink(path.join(outside, 'secret'), path.join(root, '.env'));
    await write(path.join(root, '.worktreeinclude'), '.env\n*.local\n');
    await expect(copyIncluded(root, wt)).rejects.toThrow(RefusedError);
    expect(existsSync(path.join(wt, '.env'))).toBe(false);
    expect(existsSync(path.join(wt, 'a.local'))).toBe(false);

    // a link that stays inside the repository is copied as the file it points to
    await rm(path.join(root, '.env'));
    await write(path.join(root, 'dist/real.env'), 'inside\n');
    await symlink('dist/real.env', path.join(root, '.env'));
    expect(await copyIncluded(root, wt)).toEqual(['.env', 'a.local']);
    expect(await readFile(path.join(wt, '.env'), 'utf8')).toBe('inside\n');
    expect((await import('node:fs/promises').then((fs) => fs.lstat(path.join(wt, '.env')))).isSymbolicLink()).toBe(
      false,
    );
  });

  it('never writes through a link in the worktree', async () => {
    const outside = await mkdtemp(path.join(os.tmpdir(), 'lf-outside-'));
    temps.push(outside);
    await write(path.join(root, 'config/secrets/key.pem'), 'pem\n');
    await write(path.join(root, '.worktreeinclude'), 'config/secrets/\n');
    await mkdir(path.join(wt, 'config'), { recursive: true });
    await symlink(outside, path.join(wt, 'config', 'secrets'));
    await expect(copyIncluded(root, wt)).rejects.toThrow(RefusedError);
    expect(existsSync(path.join(outside, 'key.pem'))).toBe(false);
  });

  it('clones node_modules when the lockfile is identical, and says how', async () => {
    for (let i = 0; i < 300; i++)
      await write(path.join(root, 'node_modules', `pkg${i % 10}`, `f${i}.js`), `module.exports = ${i};\n`);
    await mkdir(path.join(root, 'node_modules', '.bin'), { recursive: true });
    await symlink('../pkg1/f1.js', path.join(root, 'node_modules', '.bin', 'tool'));

    const result = await linkDependencies(root, wt);
    expect(['reflink', 'hardlink', 'copy']).toContain(result.method);
    expect(result.reason).toBeNull();
    expect(result.ms).toBeGreaterThanOrEqual(0);
    expect(await readFile(path.join(wt, 'node_modules/pkg3/f13.js'), 'utf8')).toBe('module.exports = 13;\n');
    expect(await readFile(path.join(wt, 'node_modules/.bin/tool'), 'utf8')).toBe('module.exports = 1;\n');

    // already there: nothing to do, the caller keeps what it has
    expect((await linkDependencies(root, wt)).method).toBe('none');
    // node_modules is ignored, so the clone is never committed
    expect(await git(wt, 'status', '--porcelain')).toBe('');
  });

  it('falls back when the lockfile differs or nothing can be cloned', async () => {
    await write(path.join(root, 'node_modules/pkg/index.js'), '1\n');
    await write(path.join(wt, 'package-lock.json'), '{"lockfileVersion":3,"changed":true}\n');
    const differs = await linkDependencies(root, wt);
    expect(differs).toMatchObject({ method: 'none' });
    expect(differs.reason).toContain('package-lock.json differs');
    expect(existsSync(path.join(wt, 'node_modules'))).toBe(false);

    await git(wt, 'checkout', '--', 'package-lock.json');
    await rm(path.join(root, 'node_modules'), { recursive: true });
    expect((await linkDependencies(root, wt)).reason).toContain('no node_modules');

    await rm(path.join(root, 'package-lock.json'));
    expect((await linkDependencies(root, wt)).reason).toContain('no lockfile');
  });

  it('can be told not to use hard links', async () => {
    await write(path.join(root, 'node_modules/pkg/index.js'), '1\n');
    const result = await linkDependencies(root, wt, ['node_modules'], { hardlinks: false });
    expect(['reflink', 'copy']).toContain(result.method);
    const [a, b] = await Promise.all([
      stat(path.join(root, 'node_modules/pkg/index.js')),
      stat(path.join(wt, 'node_modules/pkg/index.js')),
    ]);
    expect(a.ino).not.toBe(b.ino);
  });
});
