import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { OWN_ENTRIES, discardedRef, taskBranch } from '../../src/domain/layout.js';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

/** literals that name a layout constant; only src/domain/layout.ts may spell them in code */
const SPELLED_ONCE: Array<[RegExp, string]> = [
  [/2 \*\* 31|2_147_483_647|2147483647/, 'MAX_TIMER_MS'],
  [/[`'"]loop\//, 'taskBranch / BRANCH_PREFIX'],
  [/refs\/loopfleet\/discarded/, 'discardedRef'],
  [
    /['"`](state\.json|fleet\.lock|baselines\.json|lessons\.md)['"`]/,
    'STATE_FILE / LOCK_FILE / BASELINES_FILE / LESSONS_FILE',
  ],
  [/['"`](logs|reports)['"`]/, 'LOGS_DIR / REPORTS_DIR'],
  [/['"`]\.loop-worktrees['"`/]/, 'WORK_DIR'],
];

async function sources(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile() && /\.tsx?$/.test(e.name)).map((e) => join(e.parentPath, e.name));
}

describe('layout constants', () => {
  it('are spelled once, in src/domain/layout.ts', async () => {
    const found: string[] = [];
    for (const file of await sources(SRC)) {
      const rel = relative(SRC, file);
      if (rel === join('domain', 'layout.ts')) continue;
      const lines = (await readFile(file, 'utf8')).split('\n');
      lines.forEach((line, i) => {
        // Comments may name the files; code must use the constants.
        if (/^\s*(\/\/|\/\*|\*)/.test(line)) return;
        for (const [pattern, name] of SPELLED_ONCE)
          if (pattern.test(line)) found.push(`src/${rel}:${i + 1} repeats ${name}`);
      });
    }
    expect(found).toEqual([]);
  });

  it('name the branch, the discarded ref and the work folder entries', () => {
    expect(taskBranch('T-12')).toBe('loop/T-12');
    expect(discardedRef('T-12')).toBe('refs/loopfleet/discarded/T-12');
    expect([...OWN_ENTRIES].sort()).toEqual([
      'BACKLOG.md.before-merge',
      'backlog.parsed.json',
      'baselines.json',
      'fleet.lock',
      'lessons.md',
      'logs',
      'reports',
      'state.journal',
      'state.json',
      'state.reserve',
    ]);
  });
});
