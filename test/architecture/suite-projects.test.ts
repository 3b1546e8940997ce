/**
 * The suite's own layout holds: every unit file that changes process-wide state runs in a process of its
 * own, and every file the sequencer names still exists.
 */
import { existsSync, globSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LONGEST_FILES } from '../helpers/longest-first.js';
import { ROOT } from '../helpers/paths.js';
import { PROCESS_WIDE, PROCESS_WIDE_MARK, UNIT_GLOBS } from '../helpers/suite-projects.js';

const unitFiles = UNIT_GLOBS.flatMap((g) => globSync(g, { cwd: ROOT })).sort();

/** The unit files whose text changes process-wide state and that are not listed as such. */
function unlisted(files: string[], text: (file: string) => string, listed: readonly string[]): string[] {
  return files.filter((f) => PROCESS_WIDE_MARK.test(text(f)) && !listed.includes(f));
}

describe('the projects of the suite', () => {
  it('keeps every unit file that changes process.env, colours, mocks, timers or the folder apart', () => {
    expect(unlisted(unitFiles, (f) => readFileSync(path.join(ROOT, f), 'utf8'), PROCESS_WIDE)).toEqual([]);
  });

  it('would catch a planted file that sets process.env', () => {
    const planted = 'test/core/planted.test.ts';
    // Spelt in parts, so that this file does not match its own rule.
    const setsEnv = `${['process', 'env', 'TMPDIR'].join('.')} = '/x';`;
    const fakesTimers = `${['vi', 'useFakeTimers'].join('.')}();`;
    expect(unlisted([planted], () => setsEnv, PROCESS_WIDE)).toEqual([planted]);
    expect(unlisted([planted], () => fakesTimers, PROCESS_WIDE)).toEqual([planted]);
    expect(unlisted([planted], () => 'expect(1).toBe(1);', PROCESS_WIDE)).toEqual([]);
  });

  it('names only files that exist, each once', () => {
    for (const f of [...PROCESS_WIDE, ...LONGEST_FILES]) expect(existsSync(path.join(ROOT, f)), f).toBe(true);
    expect(new Set(PROCESS_WIDE).size).toBe(PROCESS_WIDE.length);
    expect(new Set(LONGEST_FILES).size).toBe(LONGEST_FILES.length);
  });
});
