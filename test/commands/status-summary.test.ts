import { describe, expect, it } from 'vitest';
import { statusSummary, summaryLine } from '../../src/commands/status-summary.js';
import { renderReport } from '../../src/core/report/morning-report.js';
import type { TaskState, TaskStatus, TaskStatusJson } from '../../src/domain/types.js';
import { defaultConfig, fakeTask } from '../helpers/fake-fleet.js';

function row(id: string, status: TaskStatus, costUsd: number, tokens = 1000): TaskStatusJson {
  return {
    id,
    title: id,
    status,
    phase: null,
    attempt: 1,
    maxAttempts: 3,
    tokens,
    costUsd,
    branch: null,
    reason: null,
  };
}

describe('status --summary', () => {
  it('sums the rows and divides what all spent by the verified (merged ones count) and by the merged', () => {
    const s = statusSummary([
      row('T-1', 'verified', 0.25),
      row('T-2', 'merged', 0.5),
      row('T-3', 'failed', 0.75),
      row('T-4', 'queued', 0, 0),
    ]);
    expect(s).toMatchObject({ tasks: 4, tokens: 3000, costUsd: 1.5, verified: 2, merged: 1 });
    expect(s.costPerVerified).toBe(0.75);
    expect(s.costPerMerged).toBe(1.5);
    expect(s.counts).toMatchObject({ verified: 1, merged: 1, failed: 1, queued: 1, running: 0 });
    expect(summaryLine(s)).toBe(
      '1 queued · 1 verified · 1 merged · 1 failed — 3k tokens, $1.50; $0.75 per verified task, $1.50 per merged task',
    );
  });

  it('says null, never 0 or infinity, when nothing was verified or merged', () => {
    const s = statusSummary([row('T-1', 'failed', 0.3)]);
    expect([s.costPerVerified, s.costPerMerged]).toEqual([null, null]);
    expect(JSON.parse(JSON.stringify(s)).costPerVerified).toBeNull();
    expect(summaryLine(s)).toMatch(/\$0\.30; none verified$/);
  });
});

describe('the morning report', () => {
  function report(tasks: TaskState[]): string {
    const counts = Object.fromEntries(tasks.map((t) => [t.status, 0])) as Record<TaskStatus, number>;
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
      },
      tasks,
      ran: new Set(tasks.map((t) => t.id)),
      config: defaultConfig(),
      sandboxed: true,
      exitCode: 0,
    });
  }

  it('gives the cost per merged task when tasks of the run landed, next to the cost per verified task', () => {
    const text = report([
      fakeTask('T-1', { status: 'merged', costUsd: 1 }),
      fakeTask('T-2', { status: 'verified', costUsd: 1 }),
      fakeTask('T-3', { status: 'failed', costUsd: 2 }),
    ]);
    expect(text).toContain(
      '**Cost per verified task:** $2.00 ($4.00 over 2 verified tasks, failed attempts included). **Cost per merged task:** $4.00 (1 merged).',
    );
    expect(report([fakeTask('T-1', { status: 'verified', costUsd: 1 })])).not.toContain('per merged');
  });
});
