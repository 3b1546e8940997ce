import { describe, expect, it } from 'vitest';
import { entryRules, textBytes } from '../../../src/core/guard/entries.js';
import type { DiffEntry } from '../../../src/ports/git.js';

const limits = { maxFileBytes: 1000, maxBytes: 1500 };
const entry = (path: string, over: Partial<DiffEntry> = {}): DiffEntry => ({
  path,
  status: 'A',
  oldMode: '000000',
  newMode: '100644',
  oldSha: '0'.repeat(40),
  newSha: 'a'.repeat(40),
  size: 10,
  binary: false,
  added: 1,
  deleted: 0,
  ...over,
});
const none = () => false;

describe('what git would carry', () => {
  it('refuses gitlinks, .gitmodules, .gitattributes and nested .git paths unless the task names them', () => {
    const entries = [
      entry('vendor/lib', { newMode: '160000', size: null }),
      entry('.gitmodules'),
      entry('docs/.gitattributes'),
      entry('a/.GIT/config'),
      entry('src/ok.ts'),
    ];
    expect(entryRules(entries, '', limits, none)).toEqual([
      "guard: vendor/lib is a gitlink (a nested git repository); name it in the task's files: to allow it",
      "guard: .gitmodules changed — submodules are refused; name it in the task's files: to allow it",
      "guard: docs/.gitattributes changed — .gitattributes decide how git filters, diffs and merges files; name it in the task's files: to allow it",
      'guard: a/.GIT/config is inside a nested .git',
    ]);
    expect(entryRules(entries, '', limits, (p) => p === 'vendor/lib' || p === '.gitmodules')).toHaveLength(2);
  });

  it('counts binary files by their size, for each file and for the whole diff', () => {
    expect(entryRules([entry('big.bin', { binary: true, size: 1001 })], '', limits, none)).toEqual([
      'guard: big.bin is 1001 bytes, more than max_file_bytes 1000',
    ]);
    const two = [entry('a.bin', { binary: true, size: 800 }), entry('b.bin', { binary: true, size: 800 })];
    expect(entryRules(two, '', limits, none)).toEqual(['guard: the diff is 1600 bytes, more than max_bytes 1500']);
    // a deleted large file is no new content
    expect(
      entryRules(
        [entry('old.bin', { status: 'D', binary: true, size: 5000 })],
        '',
        { maxFileBytes: 1000, maxBytes: 10_000 },
        none,
      ),
    ).toEqual([]);
  });

  it('counts text files by the bytes of their changed lines', () => {
    const diff = 'diff --git a/t.txt b/t.txt\n--- a/t.txt\n+++ b/t.txt\n@@ -1 +1 @@\n-old line\n+new line!\n context\n';
    expect(textBytes(diff).get('t.txt')).toBe('-old line'.length + '+new line!'.length);
    expect(
      entryRules([entry('t.txt', { status: 'M', size: 20 })], diff, { maxFileBytes: 1000, maxBytes: 18 }, none),
    ).toEqual(['guard: the diff is 19 bytes, more than max_bytes 18']);
  });
});
