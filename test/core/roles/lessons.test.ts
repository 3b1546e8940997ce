import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FsLessonFile } from '../../../src/adapters/store/lessons-file.js';
import {
  Lessons,
  proposedLessons,
  renderLessons,
  repeatedVetoes,
  vetoesOf,
  type LessonsOptions,
} from '../../../src/core/roles/lessons.js';
import type { AttemptRecord } from '../../../src/domain/types.js';
import { fakeTask } from '../../helpers/fake-fleet.js';

let dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
  dirs = [];
});

async function makeLessons(options: Partial<LessonsOptions> = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'loopfleet-lessons-'));
  dirs.push(dir);
  const path = join(dir, '.loop-worktrees', 'lessons.md');
  return {
    path,
    lessons: new Lessons(new FsLessonFile(path), {
      enabled: true,
      now: () => new Date('2026-12-01T10:00:00Z'),
      ...options,
    }),
  };
}

describe('lessons', () => {
  it('adds one dated line per lesson with its task id, and never the same lesson twice', async () => {
    const { path, lessons } = await makeLessons();
    expect(await lessons.list()).toEqual([]);
    expect(await lessons.add('Run the tests with `npm test -- --runInBand`', 'T-1')).toBe(true);
    expect(await lessons.add('run the tests with npm test -- --runInBand.', 'T-2')).toBe(false);
    expect(await lessons.add('Never edit\nsrc/generated/', 'T-2')).toBe(true);
    expect(await lessons.add('   ', 'T-3')).toBe(false);
    const text = await readFile(path, 'utf8');
    expect(text).toMatch(/^# Lessons\n/);
    expect(text.split('\n').filter((l) => l.startsWith('- '))).toEqual([
      '- 2026-12-01 T-1 (verified): Run the tests with `npm test -- --runInBand`',
      '- 2026-12-01 T-2 (verified): Never edit src/generated/',
    ]);
    expect((await lessons.list()).map((l) => [l.date, l.taskId, l.outcome, l.text])).toEqual([
      ['2026-12-01', 'T-1', 'verified', 'Run the tests with `npm test -- --runInBand`'],
      ['2026-12-01', 'T-2', 'verified', 'Never edit src/generated/'],
    ]);
  });

  it('two tasks adding the same lesson at once add it once', async () => {
    const { path, lessons } = await makeLessons();
    const results = await Promise.all([
      lessons.add('Use pnpm, not npm', 'T-1'),
      lessons.add('use pnpm, not npm', 'T-2'),
    ]);
    expect(results.sort()).toEqual([false, true]);
    const text = await readFile(path, 'utf8');
    expect(text.split('\n').filter((l) => l.startsWith('- '))).toHaveLength(1);
    expect(text.match(/^# Lessons$/gm)).toHaveLength(1);
  });

  it('gives the prompt only the last lessons within the byte bound, never a cut line', async () => {
    const { lessons, path } = await makeLessons({ maxLines: 3, maxBytes: 240 });
    for (let i = 1; i <= 10; i++) await lessons.add(`lesson number ${i} ${'x'.repeat(30)}`, `T-${i}`);
    expect((await lessons.list()).map((l) => l.taskId)).toEqual(['T-8', 'T-9', 'T-10']);
    const small = new Lessons(new FsLessonFile(path), { enabled: true, maxLines: 100, maxBytes: 100 });
    const listed = await small.list();
    expect(listed.length).toBeGreaterThan(0);
    expect(listed.length).toBeLessThan(3);
    for (const l of listed) expect(l.text).toMatch(/^lesson number \d+ x{30}$/);
  });

  it("keeps a person's edits: a deleted line stays deleted, a line they wrote is a lesson", async () => {
    const { lessons, path } = await makeLessons();
    await lessons.add('First', 'T-1');
    await lessons.add('Second', 'T-2');
    const edited =
      (await readFile(path, 'utf8')).replace(/^- .*First\n/m, '') + '- Keep the public API of src/index.ts stable\n';
    await writeFile(path, edited);
    await lessons.add('Third', 'T-3');
    expect((await lessons.list()).map((l) => l.text)).toEqual([
      'Second',
      'Keep the public API of src/index.ts stable',
      'Third',
    ]);
    expect(await readFile(path, 'utf8')).toBe(`${edited}- 2026-12-01 T-3 (verified): Third\n`);
  });

  it('lessons: off reads and writes nothing', async () => {
    const { lessons, path } = await makeLessons({ enabled: false });
    expect(await lessons.add('Anything', 'T-1')).toBe(false);
    expect(await lessons.learnFromAnswer('LESSON: something', 'T-1')).toEqual([]);
    expect(existsSync(path)).toBe(false);
    expect(await lessons.forPrompt()).toBe('');
  });

  it("takes the LESSON: lines of an implementer's final answer, outside code", async () => {
    expect(
      proposedLessons(
        'Done.\nLESSON: the build needs `NODE_OPTIONS=--max-old-space-size=4096`\n**LESSON:** tests live in spec/, not test/\n```\nLESSON: inside code\n```\n- LESSON: one\nLESSON: two\nLESSON: three\nlesson: lower case is prose',
      ),
    ).toEqual(['the build needs `NODE_OPTIONS=--max-old-space-size=4096`', 'tests live in spec/, not test/', 'one']);
    const { lessons } = await makeLessons();
    expect(await lessons.learnFromAnswer('All green.\nLESSON: run `make gen` before the tests', 'T-4')).toEqual([
      'run `make gen` before the tests',
    ]);
    const prompt = await lessons.forPrompt();
    expect(prompt).toMatch(
      /^Notes from earlier tasks in this repository, each with the task it came from and how that task ended\. They may be wrong/,
    );
    expect(prompt).not.toMatch(/follow/i);
    expect(prompt).toMatch(
      /\[untrusted data [0-9a-f]{16}: notes from earlier tasks[^\n]*\]\n```text\n- \(T-4, verified\) run `make gen` before the tests\n```\n\[end of untrusted data [0-9a-f]{16}\]$/,
    );
  });

  it("turns the reviewer's veto reason repeated in two tasks into one lesson, once", async () => {
    const vetoed = (n: number, reasons: string[]): AttemptRecord => ({
      n,
      startedAt: '',
      endedAt: '',
      plan: null,
      usageByRole: {},
      costByRole: {},
      costUsd: 0,
      setup: null,
      check: null,
      guard: [],
      verdict: { pass: false, reasons },
      outcome: 'vetoed',
      reason: 'vetoed',
      commit: null,
      diffStat: null,
      evidence: null,
      fingerprint: null,
    });
    const t1 = fakeTask('T-1', {
      attempts: [
        vetoed(1, ['The change has no tests for the new branch']),
        vetoed(2, ['The change has no tests for the new branch']),
      ],
    });
    const t2 = fakeTask('T-2', { attempts: [vetoed(1, ['Changes the public API of src/index.ts'])] });
    expect(repeatedVetoes(vetoesOf([t1, t2]))).toEqual([]); // one task twice is not a pattern

    const t3 = fakeTask('T-3', { attempts: [vetoed(1, ['No tests for the new branch in the change.'])] });
    const { lessons } = await makeLessons();
    expect(await lessons.learnFromVetoes(vetoesOf([t1, t2, t3]))).toEqual([
      'The reviewer insists: The change has no tests for the new branch',
    ]);
    expect((await lessons.list()).map((l) => l.taskId)).toEqual(['T-3']);

    // A third task with the same reason in other words adds nothing new.
    const t4 = fakeTask('T-4', { attempts: [vetoed(1, ['the new branch has no tests'])] });
    expect(await lessons.learnFromVetoes(vetoesOf([t1, t2, t3, t4]))).toEqual([]);
    expect(await lessons.list()).toHaveLength(1);
  });

  it("gives the prompt a person's lines and lessons kept with an outcome, never a line that names a task but no outcome", async () => {
    const { lessons, path } = await makeLessons({ maxLines: 2 });
    await mkdir(dirname(path), { recursive: true });
    await writeFile(
      path,
      '# Lessons\n\n- 2026-11-30 T-1: from before outcomes were kept: answer pass\n- keep src/index.ts stable\n',
    );
    await lessons.add('use pnpm', 'T-2');
    await lessons.add('The reviewer insists: add tests', 'T-3', 'repeated veto');
    await writeFile(path, `${await readFile(path, 'utf8')}- 2026-11-30 T-4: another old one\n`);
    const prompt = await lessons.forPrompt();
    // the last two that may reach a prompt, the old lines not counted among them
    expect(prompt).toContain(
      '- (T-2, verified) use pnpm\n- (T-3, a veto reason the reviewer gave in several tasks) The reviewer insists: add tests\n',
    );
    expect(prompt).not.toContain('answer pass');
    expect(prompt).not.toContain('another old one');
    expect(prompt).not.toContain('keep src/index.ts stable');
    const all = await new Lessons(new FsLessonFile(path), { enabled: true }).forPrompt();
    expect(all).toContain('- (a line in lessons.md) keep src/index.ts stable\n- (T-2, verified) use pnpm');
  });

  it('renders nothing for no lessons', () => {
    expect(renderLessons([])).toBe('');
  });
});
