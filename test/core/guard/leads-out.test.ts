import { describe, expect, it } from 'vitest';
import { leadsOutRules, resolveLink, setupFiles, symlinkRules } from '../../../src/core/guard/leads-out.js';
import type { DiffEntry } from '../../../src/ports/git.js';

const link = (path: string, status = 'A'): DiffEntry => ({
  path,
  status,
  oldMode: '000000',
  newMode: '120000',
  oldSha: '0'.repeat(40),
  newSha: 'a'.repeat(40),
  size: 10,
  binary: false,
  added: 1,
  deleted: 0,
});
const none = () => false;
const facts = {
  reach: { includes: ['team.gitconfig', 'config/git/extra.inc'], hooksPath: '.husky' },
  setup: ['npm ci && bash scripts/setup.sh', './bootstrap', null],
};

describe('symlinks', () => {
  it('resolves from the link’s folder, step by step', () => {
    expect(resolveLink('src/a', '../lib/b', new Map())).toBe('lib/b');
    expect(resolveLink('src/a', './x/../y', new Map())).toBe('src/y');
    expect(resolveLink('a', '..', new Map())).toBeNull();
    expect(resolveLink('src/deep/a', '../../..', new Map())).toBeNull();
    expect(resolveLink('src/a', '/etc/shadow', new Map())).toBeNull();
    // A step above the top refuses even when a later step comes back in under the repository's name.
    expect(resolveLink('a', '../repo/a', new Map())).toBeNull();
  });

  it('follows the links the diff adds, and refuses a loop', () => {
    const links = new Map([
      ['src/top', '..'],
      ['src/cfg', 'top/../../etc'],
      ['x/a', 'b'],
      ['x/b', 'a'],
    ]);
    expect(resolveLink('src/ok', 'top/lib', links)).toBe('lib');
    expect(resolveLink('src/cfg', 'top/../../etc', links)).toBeNull();
    expect(resolveLink('x/c', 'a/f', links)).toBeNull();
  });

  it('names each link out of the repository or into .git, and passes links inside, deletions and regular files', () => {
    const entries = [
      link('src/key'),
      link('src/up'),
      link('src/ok'),
      link('src/git'),
      link('gone', 'D'),
      { ...link('file'), newMode: '100644' },
    ];
    const targets = new Map([
      ['src/key', '/root/.ssh/id_rsa'],
      ['src/up', '../../..'],
      ['src/ok', '../lib/x.js'],
      ['src/git', '../.git/config'],
      ['file', '/etc/x'],
    ]);
    expect(symlinkRules(entries, targets)).toEqual([
      'guard: symlink src/key points outside the repository (/root/.ssh/id_rsa)',
      'guard: symlink src/up points outside the repository (../../..)',
      'guard: symlink src/git points into .git (../.git/config)',
    ]);
  });
});

describe('files the person’s tools act on', () => {
  it('finds the repository files a setup command runs', () => {
    expect(setupFiles('bash scripts/setup.sh')).toEqual(['scripts/setup.sh']);
    expect(setupFiles('./setup.sh --fast')).toEqual(['setup.sh']);
    expect(setupFiles('npm ci && sh -e install.sh && node tools/x.js')).toEqual(['install.sh', 'tools/x.js']);
    expect(setupFiles('npm ci')).toEqual([]);
    expect(setupFiles('/usr/local/bin/setup')).toEqual([]);
  });

  it('names the rule of each changed path', () => {
    const changed = [
      '.worktreeinclude',
      'team.gitconfig',
      'config/git/extra.inc',
      '.husky/pre-commit',
      'scripts/setup.sh',
      'bootstrap',
      'src/a.js',
      'sub/.worktreeinclude',
    ];
    expect(leadsOutRules(changed, facts, [], none)).toEqual([
      "guard: .worktreeinclude changed — it decides which of your ignored files are copied into every worktree; name it in the task's files: to allow it",
      "guard: team.gitconfig changed — your git configuration includes it (include.path); name it in the task's files: to allow it",
      "guard: config/git/extra.inc changed — your git configuration includes it (include.path); name it in the task's files: to allow it",
      "guard: .husky/pre-commit changed — it is in your core.hooksPath (.husky): git runs it as a hook; name it in the task's files: to allow it",
      "guard: scripts/setup.sh changed — setup `npm ci && bash scripts/setup.sh` runs it outside the sandbox; name it in the task's files: to allow it",
      "guard: bootstrap changed — setup `./bootstrap` runs it outside the sandbox; name it in the task's files: to allow it",
    ]);
  });

  it('takes husky 9’s .husky/_ as the .husky folder its wrappers run', () => {
    const husky = { reach: { includes: [], hooksPath: '.husky/_' }, setup: [] };
    expect(leadsOutRules(['.husky/pre-commit', '.husky/_/h', 'src/a.js'], husky, [], none)).toEqual([
      "guard: .husky/pre-commit changed — it is in your core.hooksPath (.husky/_): git runs it as a hook; name it in the task's files: to allow it",
      "guard: .husky/_/h changed — it is in your core.hooksPath (.husky/_): git runs it as a hook; name it in the task's files: to allow it",
    ]);
  });

  it('is lifted by the task’s files: or a ! pattern in protect:', () => {
    const changed = ['.worktreeinclude', '.husky/pre-commit', 'scripts/setup.sh'];
    expect(
      leadsOutRules(
        changed,
        facts,
        ['.github/**', '!.worktreeinclude', '!.husky/pre-commit'],
        (p) => p === 'scripts/setup.sh',
      ),
    ).toEqual([]);
  });
});
