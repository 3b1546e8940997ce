import { afterEach, describe, expect, test } from 'vitest';
import { cleanup } from 'ink-testing-library';
import { detailLines, type DetailSources } from '../../src/ui/detail-content.js';
import { fakeTask } from '../helpers/fake-fleet.js';
import type { ConflictDetail } from '../../src/domain/types.js';
import { KEY, setup, waitFor } from '../helpers/ui-render.js';

afterEach(cleanup);

const HUNK = [
  '<<<<<<< loop/T-1',
  'export const add = (a, b) => a + b + 1;',
  '=======',
  'export const add = (a, b) => b + a;',
  '>>>>>>> loop/T-2',
].join('\n');
const DIFF = [
  'diff --git a/src/calc.js b/src/calc.js',
  '--- a/src/calc.js',
  '+++ b/src/calc.js',
  '@@ -1 +1 @@',
  '-old',
  '+new',
].join('\n');

const withT2: ConflictDetail = { with: 'T-2', files: ['src/calc.js'], hunks: [{ file: 'src/calc.js', hunk: HUNK }] };
const withMain: ConflictDetail = { with: 'main', files: ['README.md', 'docs/a.md'], hunks: [] };

const tasks = () => [
  fakeTask('T-1', {
    title: 'One',
    status: 'verified',
    attempt: 1,
    conflictsWith: ['main', 'T-2'],
    conflicts: [withMain, withT2],
  }),
  fakeTask('T-2', { title: 'Two', status: 'verified', attempt: 1 }),
  fakeTask('T-3', {
    title: 'Three',
    status: 'conflict',
    attempt: 1,
    reason: 'merge conflict in src/calc.js',
    conflicts: [{ ...withT2, with: 'main' }],
  }),
  // left over from before it was sent back: not a conflict any more
  fakeTask('T-4', { title: 'Four', status: 'queued', conflictsWith: ['T-2'], conflicts: [withT2] }),
];

const sources = (over: Partial<DetailSources['task']>): DetailSources => ({
  task: fakeTask('T-1', { status: 'verified', ...over }),
  output: undefined,
  phaseOutput: undefined,
  diff: { status: 'ready', text: DIFF },
  base: 'main',
  review: false,
});

describe('conflicts in the detail pane', () => {
  test("a verified task's predicted conflicts: with whom, the files, then the hunks, above its diff", async () => {
    const t = await setup({ tasks: tasks(), rows: 50, diffs: { 'T-1': DIFF } });
    await t.press(KEY.enter, '3');
    await waitFor(() => expect(t.frame()).toContain('+new'));
    const frame = t.frame();
    expect(frame).toContain('⚠ Conflicts · predicted, nothing is merged yet');
    expect(frame).toContain('with main: README.md, docs/a.md');
    expect(frame).toContain('with T-2: src/calc.js');
    expect(frame).toContain('<<<<<<< loop/T-1');
    expect(frame).toContain('export const add = (a, b) => b + a;');
    expect(frame).toContain('>>>>>>> loop/T-2');
    // base first, then the tasks; the section comes before the diff
    expect(frame.indexOf('with main:')).toBeLessThan(frame.indexOf('with T-2:'));
    expect(frame.indexOf('>>>>>>> loop/T-2')).toBeLessThan(frame.indexOf('diff --git'));
  });

  test('a task in conflict shows what it conflicts with; a task with none, or no longer verified, shows no section', async () => {
    const t = await setup({ tasks: tasks(), rows: 50 });
    await t.press('j', 'j', KEY.enter, '3');
    expect(t.frame()).toContain('── T-3 ⚠ conflict');
    expect(t.frame()).toContain('⚠ Conflicts');
    expect(t.frame()).not.toContain('predicted');
    expect(t.frame()).toContain('with main: src/calc.js');
    expect(t.frame()).toContain('<<<<<<< loop/T-1');
    await t.press('k');
    expect(t.frame()).toContain('── T-2 ✔ verified');
    expect(t.frame()).not.toContain('Conflicts');
    await t.press('j', 'j');
    expect(t.frame()).toContain('── T-4 · queued');
    expect(t.frame()).not.toContain('Conflicts');
  });

  test('a forecast that arrives while the pane is open shows at once', async () => {
    const t = await setup({ tasks: tasks(), rows: 50 });
    await t.press('j', KEY.enter, '3');
    expect(t.frame()).not.toContain('Conflicts');
    t.fleet.update('T-2', { conflictsWith: ['T-1'], conflicts: [{ ...withT2, with: 'T-1' }] });
    await waitFor(() => expect(t.frame()).toContain('with T-1: src/calc.js'));
  });

  test('the section is bounded: long hunks are cut, and past a screenful the rest is counted, not shown', () => {
    const long = [
      '<<<<<<< ours',
      ...Array.from({ length: 39 }, (_, i) => `ours line ${i}`),
      '=======',
      'theirs',
      '>>>>>>> theirs',
    ].join('\n');
    const many: ConflictDetail[] = Array.from({ length: 4 }, (_, i) => ({
      with: `T-${i + 2}`,
      files: ['a.js', 'b.js', 'c.js'],
      hunks: [
        { file: 'a.js', hunk: long },
        { file: 'b.js', hunk: long },
        { file: 'c.js', hunk: long },
      ],
    }));
    const lines = detailLines('diff', sources({ conflicts: many, conflictsWith: many.map((d) => d.with) }), 80).map(
      (l) => l.text,
    );
    const end = lines.indexOf('diff --git a/src/calc.js b/src/calc.js');
    expect(end).toBeGreaterThan(0);
    expect(end).toBeLessThanOrEqual(70);
    // every conflict is named with its files, even those whose hunks did not fit
    for (const d of many) expect(lines).toContain(`with ${d.with}: a.js, b.js, c.js`);
    expect(lines.some((l) => /^… \d+ more lines$/.test(l))).toBe(true);
    expect(lines.some((l) => /^… \d+ more hunks not shown$/.test(l))).toBe(true);
    // a cut hunk still ends with its closing marker
    expect(lines).toContain('>>>>>>> theirs');
  });

  test('a verified task whose forecast has names but no details yet shows the names', () => {
    const lines = detailLines('diff', sources({ conflictsWith: ['T-9'] }), 80).map((l) => l.text);
    expect(lines).toContain('with T-9');
  });
});
