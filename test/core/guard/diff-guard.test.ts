import { describe, expect, it } from 'vitest';
import { conflictMarkers } from '../../../src/core/guard/conflict-markers.js';
import { findSecrets, guardDiff } from '../../../src/core/guard/diff-guard.js';

const base = {
  diff: '',
  maxFiles: 5,
  maxLines: 100,
  protect: ['.github/**', '.env*', 'package-lock.json'],
  allowed: [] as string[],
};

describe('guard checks', () => {
  it('pass an ordinary diff', () => {
    expect(guardDiff({ ...base, numstat: [{ path: 'src/a.ts', added: 10, deleted: 2 }] })).toEqual([]);
  });
  it('refuse too many files and too many lines', () => {
    const numstat = Array.from({ length: 6 }, (_, i) => ({ path: `f${i}`, added: 20, deleted: 0 }));
    const reasons = guardDiff({ ...base, numstat });
    expect(reasons.join('\n')).toMatch(/6 files, more than max_files 5/);
    expect(reasons.join('\n')).toMatch(/120 lines, more than max_lines 100/);
  });
  it('refuse protected paths unless the task names them', () => {
    const numstat = [
      { path: '.github/workflows/ci.yml', added: 1, deleted: 0 },
      { path: 'package-lock.json', added: 1, deleted: 1 },
    ];
    expect(guardDiff({ ...base, numstat })).toHaveLength(2);
    expect(guardDiff({ ...base, numstat, allowed: ['package-lock.json'] })).toEqual([
      "guard: .github/workflows/ci.yml is protected (protect:); name it in the task's files: to allow the change",
    ]);
  });
  it('find secrets only in added lines', () => {
    const key = `sk-ant-api03-${'a'.repeat(40)}`;
    const diff = `diff --git a/x.js b/x.js\n--- a/x.js\n+++ b/x.js\n@@\n-const old = "${key}";\n+const k = "${key}";\n+const aws = "AKIAABCDEFGHIJKLMNOP";\n`;
    const found = findSecrets(diff);
    expect(found).toContain('guard: x.js: secret-shaped content added (Anthropic API key)');
    expect(found).toContain('guard: x.js: secret-shaped content added (AWS access key id)');
    expect(findSecrets(`+++ b/y.js\n-const k = "${key}";\n`)).toEqual([]);
  });
});

describe('conflict markers', () => {
  const patch = (file: string, added: string[]) =>
    `diff --git a/${file} b/${file}\n--- a/${file}\n+++ b/${file}\n@@ -1 +1,${added.length} @@\n${added.map((l) => `+${l}`).join('\n')}\n`;

  it('refuses a change that commits a conflict, naming the file; a Markdown underline is fine', () => {
    const diff =
      patch('src/calc.js', ['<<<<<<< HEAD', 'a()', '=======', 'b()', '>>>>>>> loop/T-2']) +
      patch('README.md', ['Title', '=======']);
    expect(conflictMarkers(diff, () => false)).toEqual([
      'guard: src/calc.js adds 2 conflict marker lines (<<<<<<< / >>>>>>>): a conflict is resolved, never committed',
    ]);
  });

  it("lets a task's files: carry them (a test fixture of a merge tool)", () => {
    expect(
      conflictMarkers(patch('test/fixtures/conflict.txt', ['<<<<<<< ours']), (p) => p.startsWith('test/fixtures/')),
    ).toEqual([]);
  });
});
