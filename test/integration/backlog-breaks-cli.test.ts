import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { backlog } from '../helpers/fleet-harness.js';
import { git, makeRepo, read } from '../helpers/git-repo.js';
import { CLI } from '../helpers/paths.js';

describe('a backlog line with a lone carriage return, run from the command line', () => {
  it('exits 2 naming the file and line, and writes nothing', { timeout: 60_000 }, async () => {
    const text = backlog('check: "true"', '- [ ] T-1 One\n- [ ] T-2 Two\rhalf\n- [ ] T-3 Three\n  after: T-2');
    const r = await makeRepo({ 'BACKLOG.md': text });
    try {
      const line = text.split('\n').findIndex((l) => l.includes('\r')) + 1;
      const run = await execa(process.execPath, [CLI, '--overnight'], {
        cwd: r.root,
        reject: false,
        env: { ANTHROPIC_API_KEY: 'k', NO_COLOR: '1' },
      });
      expect(run.exitCode).toBe(2);
      expect(run.stderr).toContain(`BACKLOG.md:${line}: line contains a lone carriage return (U+000D)`);
      expect(run.stderr).not.toMatch(/after: T-2 names no task/);
      expect(existsSync(join(r.root, '.loop-worktrees'))).toBe(false);
      expect(await read(r.root, 'BACKLOG.md')).toBe(text);
      expect(await git(r.root, 'status', '--porcelain')).toBe('');
    } finally {
      await r.cleanup();
    }
  });
});

describe('a backlog whose ids collide, run from the command line', () => {
  it('T-007 beside T-7 (and an item with no id): exit 2 at the later line, nothing written, no id added', {
    timeout: 60_000,
  }, async () => {
    const text = backlog('check: "true"', '- [ ] T-7 Seven\n- [ ] New work\n- [ ] T-007 Seven again');
    const r = await makeRepo({ 'BACKLOG.md': text });
    try {
      const line = text.split('\n').findIndex((l) => l.includes('T-007')) + 1;
      const run = await execa(process.execPath, [CLI, '--overnight'], {
        cwd: r.root,
        reject: false,
        env: { ANTHROPIC_API_KEY: 'k', NO_COLOR: '1' },
      });
      expect(run.exitCode).toBe(2);
      expect(run.stderr).toContain(`BACKLOG.md:${line}: task id T-007 names the same task as T-7`);
      expect(existsSync(join(r.root, '.loop-worktrees'))).toBe(false);
      expect(await read(r.root, 'BACKLOG.md')).toBe(text);
      expect(await git(r.root, 'status', '--porcelain')).toBe('');
    } finally {
      await r.cleanup();
    }
  });
});
