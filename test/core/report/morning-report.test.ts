import { describe, expect, it } from 'vitest';
import { renderReport } from '../../../src/core/report/morning-report.js';
import type { ConflictDetail, TaskState, TaskStatus } from '../../../src/domain/types.js';
import { defaultConfig, fakeAttempt, fakeTask } from '../../helpers/fake-fleet.js';
import type { FleetSnapshotSummary } from '../../../src/core/task/events.js';

function report(
  tasks: TaskState[],
  ran: string[] = tasks.map((t) => t.id),
  review?: FleetSnapshotSummary['review'],
): string {
  const counts = {
    queued: 0,
    running: 0,
    verified: 0,
    failed: 0,
    conflict: 0,
    merged: 0,
    discarded: 0,
    'awaiting-approval': 0,
  } as Record<TaskStatus, number>;
  for (const t of tasks) counts[t.status] += 1;
  return renderReport({
    repoRoot: '/repo',
    base: 'main',
    startedAt: '2026-01-01T00:00:00.000Z',
    endedAt: '2026-01-01T08:00:00.000Z',
    summary: {
      state: 'finished',
      counts,
      totals: { usage: tasks[0]!.usage, costUsd: 0, elapsedMs: 0, startedAt: null },
      stoppedBy: null,
      ...(review === undefined ? {} : { review }),
    },
    tasks,
    ran: new Set(ran),
    config: defaultConfig(),
    sandboxed: true,
    exitCode: 0,
  });
}

const detail = (withName: string, files: string[]): ConflictDetail => ({
  with: withName,
  files,
  hunks: [{ file: files[0]!, hunk: '<<<<<<< a\nHUNK TEXT\n=======\n>>>>>>> b' }],
});

describe('the morning report on conflicts', () => {
  it('lists the predicted conflicts of a verified task with their files, base first', () => {
    const text = report([
      fakeTask('T-1', {
        status: 'verified',
        conflictsWith: ['main', 'T-5'],
        conflicts: [detail('main', ['README.md']), detail('T-5', ['src/calc.js', 'src/util.js'])],
      }),
      fakeTask('T-5', {
        status: 'verified',
        conflictsWith: ['T-1'],
        conflicts: [detail('T-1', ['src/calc.js', 'src/util.js'])],
      }),
      fakeTask('T-6', { status: 'verified' }),
    ]);
    const t1 = section(text, 'T-1');
    expect(t1).toContain('- **Predicted conflicts** (computed before any merge):');
    expect(t1).toContain('  - ⚠ conflicts with main in README.md');
    expect(t1).toContain('  - ⚠ conflicts with T-5 in src/calc.js, src/util.js');
    expect(t1.indexOf('with main')).toBeLessThan(t1.indexOf('with T-5'));
    expect(section(text, 'T-5')).toContain('  - ⚠ conflicts with T-1 in src/calc.js, src/util.js');
    expect(section(text, 'T-6')).not.toContain('onflicts');
    // the hunks are for the detail pane; the report stays short
    expect(text).not.toContain('HUNK TEXT');
  });

  it('lists the files a task in conflict conflicts in, and nothing for a task that left verified', () => {
    const text = report([
      fakeTask('T-2', {
        status: 'conflict',
        reason: 'merge into main conflicts',
        conflicts: [detail('main', ['src/a.js', 'src/b.js'])],
      }),
      fakeTask('T-3', { status: 'queued', conflictsWith: ['T-2'], conflicts: [detail('T-2', ['src/a.js'])] }),
    ]);
    expect(section(text, 'T-2')).toContain('- **Conflicts:**');
    expect(section(text, 'T-2')).toContain('  - ⚠ conflicts with main in src/a.js, src/b.js');
    expect(section(text, 'T-3')).not.toContain('onflicts');
  });

  it('names a verified task without details by its names, and bounds a long file list', () => {
    const files = Array.from({ length: 15 }, (_, i) => `f${i}.js`);
    const text = report([
      fakeTask('T-1', { status: 'verified', conflictsWith: ['T-2', 'T-3'], conflicts: [detail('T-2', files)] }),
    ]);
    expect(text).toContain(
      '  - ⚠ conflicts with T-2 in f0.js, f1.js, f2.js, f3.js, f4.js, f5.js, f6.js, f7.js, f8.js, f9.js and 5 more files',
    );
    const old = report([fakeTask('T-1', { status: 'verified', conflictsWith: ['T-2'] })]);
    expect(old).toContain('  - ⚠ conflicts with T-2\n');
  });

  it('marks the predicted conflicts of verified tasks this run did not touch', () => {
    const text = report(
      [
        fakeTask('T-1', { status: 'failed' }),
        fakeTask('T-7', {
          title: 'Seven',
          status: 'verified',
          conflictsWith: ['T-8'],
          conflicts: [detail('T-8', ['x.js'])],
        }),
      ],
      ['T-1'],
    );
    expect(text).toContain('- T-7 Seven — verified ⚠ conflicts with T-8 in x.js');
  });
});

/** One task's section of the report: from its heading to the next. */
function section(text: string, id: string): string {
  const start = text.indexOf(`## ${id} `);
  expect(start).toBeGreaterThanOrEqual(0);
  const next = text.indexOf('\n## ', start + 1);
  return text.slice(start, next === -1 ? undefined : next);
}

describe('the morning report on the review queue', () => {
  it('gives the capacity, the peak, how long it held and what waits at the end; nothing without the setting', () => {
    const tasks = [fakeTask('T-1', { status: 'verified' }), fakeTask('T-2', { status: 'verified' })];
    const held = { running: 0, waiting: 2, capacity: 2, held: true, peak: 2, heldMs: 5_400_000 };
    expect(report(tasks, undefined, held)).toContain(
      '**Review queue:** capacity 2; at most 2 tasks running or waiting for a person at once; it held new tasks back for 1h 30m in all; 2 waiting for a person at the end; at the end, waiting for review: 2 of 2.',
    );
    const never = { running: 0, waiting: 1, capacity: 3, held: false, peak: 1, heldMs: 0 };
    expect(report(tasks, undefined, never)).toContain(
      '**Review queue:** capacity 3; at most 1 task running or waiting for a person at once; it never held a task back; 1 waiting for a person at the end.',
    );
    expect(report(tasks)).not.toContain('Review queue');
  });
});

describe('the morning report on a split task', () => {
  const at = (minute: number) => new Date(Date.parse('2026-01-01T01:00:00.000Z') + minute * 60_000).toISOString();
  const ran = (n: number, from: number, to: number, outcome: 'verified' | 'check-failed' = 'verified') =>
    fakeAttempt(n, { startedAt: at(from), endedAt: at(to), outcome });

  it('gives its parts, how many ran at once, the conflicts met landing and the wall time against one after another', () => {
    const text = report([
      fakeTask('T-7', { status: 'merged', parts: ['T-7.1', 'T-7.2', 'T-7.3'], partConflicts: 1 }),
      fakeTask('T-7.1', { status: 'merged', attempts: [ran(1, 0, 10)] }),
      fakeTask('T-7.2', { status: 'merged', attempts: [ran(1, 5, 15)] }),
      fakeTask('T-7.3', { status: 'merged', attempts: [ran(1, 15, 25)] }),
    ]);
    expect(section(text, 'T-7')).toContain(
      '- **Parts:** 3 (T-7.1, T-7.2, T-7.3); at most 2 ran at once; 1 conflict met at landing; wall time 25m 00s against 30m 00s for the same attempts one after another',
    );
    expect(section(text, 'T-7.1')).not.toContain('**Parts:**');
  });

  it('names the part that could not be done, and why', () => {
    const text = report([
      fakeTask('T-7', {
        status: 'failed',
        parts: ['T-7.1', 'T-7.2'],
        reason: 'part T-7.1 failed: the attempts gate: 2 of 2 attempts used',
      }),
      fakeTask('T-7.1', { status: 'failed', attempts: [ran(1, 0, 5, 'check-failed'), ran(2, 5, 10, 'check-failed')] }),
      fakeTask('T-7.2', { status: 'failed', reason: 'stopped: it lands after T-7.1, which failed' }),
    ]);
    expect(section(text, 'T-7')).toContain('part T-7.1 failed: the attempts gate: 2 of 2 attempts used');
    expect(section(text, 'T-7')).toContain(
      '- **Parts:** 2 (T-7.1, T-7.2); at most 1 ran at once; 0 conflicts met at landing',
    );
    expect(section(text, 'T-7.2')).toContain('stopped: it lands after T-7.1, which failed');
  });
});
