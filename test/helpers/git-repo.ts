import { mkdtemp, mkdir, rm, writeFile, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execa } from 'execa';

export const GIT_ENV = {
  GIT_AUTHOR_NAME: 'Test Person',
  GIT_AUTHOR_EMAIL: 'test@example.com',
  GIT_COMMITTER_NAME: 'Test Person',
  GIT_COMMITTER_EMAIL: 'test@example.com',
};

export async function git(cwd: string, ...args: string[]): Promise<string> {
  const r = await execa('git', args, { cwd, env: { ...process.env, ...GIT_ENV } });
  return r.stdout.trim();
}

export async function writeFiles(root: string, files: Record<string, string>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), content);
  }
}

export async function read(root: string, path: string): Promise<string> {
  return readFile(join(root, path), 'utf8');
}

/** A real repository in a temp folder with `files` committed on `main`. */
export async function makeRepo(files: Record<string, string>): Promise<{ root: string; cleanup: () => Promise<void> }> {
  const root = await mkdtemp(join(tmpdir(), 'loopfleet-test-'));
  await writeFiles(root, files);
  await git(root, 'init', '--quiet', '--initial-branch=main');
  await git(root, 'add', '-A');
  await git(root, 'commit', '--quiet', '-m', 'initial');
  return { root, cleanup: () => rm(root, { recursive: true, force: true }) };
}
