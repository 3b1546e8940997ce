import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { neutraliseConfig } from '../../src/adapters/git/exec.js';
import { runAttack, type AttackScript } from '../helpers/attack-harness.js';
import { backlog } from '../helpers/fleet-harness.js';
import { git, makeRepo } from '../helpers/git-repo.js';

/*
 * An implementer rewrites files the person's git configuration makes git run (a husky hook folder, the
 * script of a relative clean filter) and the run goes on through the real pipeline: snapshot commit, the
 * check in the sandbox, the guard, the merge queue's git. The host canary, in a folder outside the
 * repository, stays empty whatever the task's outcome.
 */

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups) await c();
  cleanups = [];
  neutraliseConfig([]);
});

async function canary(): Promise<{ file: string; read: () => Promise<string> }> {
  const dir = await mkdtemp(join(tmpdir(), 'lf-host-canary-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'canary');
  await writeFile(file, '');
  return { file, read: () => readFile(file, 'utf8') };
}

async function project(files: Record<string, string>) {
  const r = await makeRepo({
    'BACKLOG.md': backlog('check: "true"\nreview: false', '- [ ] T-1 Improve the calculator\n  attempts: 1'),
    'src/calc.js': 'export const add = (a, b) => a + b;\n',
    ...files,
  });
  cleanups.push(r.cleanup);
  return r.root;
}

const implementer =
  (turn: ReturnType<AttackScript>): AttackScript =>
  ({ role }) =>
    role === 'implementer' ? turn : {};

describe('an implementer rewriting what the person’s git config runs', () => {
  it('husky hooks (core.hooksPath=.husky) it rewrote never run on the host', async () => {
    const c = await canary();
    const root = await project({ '.husky/pre-commit': '#!/bin/sh\nexit 0\n' });
    await git(root, 'config', 'core.hooksPath', '.husky');
    const hook = (name: string) =>
      `printf '#!/bin/sh\\necho ${name} >> ${c.file}\\n' > .husky/${name} && chmod +x .husky/${name}`;
    const names = ['post-index-change', 'reference-transaction', 'post-checkout', 'pre-commit', 'post-commit'];
    const { fleet, session } = await runAttack(
      root,
      implementer({ edits: { 'src/calc.js': 'export const add = (a, b) => b + a;\n' }, shell: names.map(hook) }),
    );
    expect(fleet.task('T-1')!.attempts.length).toBeGreaterThan(0);
    expect(await c.read()).toBe('');
    expect(session.gitWarnings.join('\n')).toMatch(/core\.hookspath .*runs \.husky/i);
  });

  it('the agent’s copy of a relative clean filter never runs on the host, and the run says so', async () => {
    const c = await canary();
    const root = await project({ '.gitattributes': '*.txt filter=tidy\n', 'tidy.sh': '#!/bin/sh\ncat\n' });
    await chmod(join(root, 'tidy.sh'), 0o755);
    await git(root, 'config', 'filter.tidy.clean', './tidy.sh');
    const attack = `printf '#!/bin/sh\\necho tidy >> ${c.file}\\ncat\\n' > tidy.sh`;
    const { fleet, session } = await runAttack(
      root,
      implementer({ edits: { 'notes.txt': 'hello\n' }, shell: [attack] }),
    );
    expect(fleet.task('T-1')!.attempts.length).toBeGreaterThan(0);
    expect(await c.read()).toBe('');
    expect(session.gitWarnings).toEqual([
      expect.stringMatching(
        /^git config filter\.tidy\.clean \(local, \.git\/config\) runs \.\/tidy\.sh, .*loopfleet runs git without it$/,
      ),
    ]);
  });
});
