import { describe, expect, it } from 'vitest';
import { parseBacklog } from '../../../src/core/backlog/parse.js';
import { Lessons } from '../../../src/core/roles/lessons.js';
import { InputErrors } from '../../../src/domain/errors.js';
import { fakeEngine, runToIdle, type FakeEngine } from '../../helpers/fake-engine.js';
import { backlog as backlogText } from '../../helpers/fleet-harness.js';
import type { FakeScript } from '../../helpers/fake-model.js';

/** `check: the-check` passes when the worktree has done.txt; the explorer's plan is "PLAN <task>". */
const script: FakeScript = ({ role, task }) =>
  role === 'explorer'
    ? { text: `PLAN ${task}: write done.txt` }
    : role === 'implementer'
      ? { edits: { 'done.txt': 'x' } }
      : {};

function engine(front: string, items: string, options: Parameters<typeof fakeEngine>[2] = {}): Promise<FakeEngine> {
  let e!: FakeEngine;
  return fakeEngine(`check: the-check\n${front}`, items, {
    script,
    run: (_c, o) => ({ exitCode: e.git.files(o.cwd).has('done.txt') ? 0 : 1 }),
    ...options,
  }).then((x) => (e = x));
}

/** Run to idle without stopping, so the same fleet can be asked again. */
async function idle(e: FakeEngine): Promise<void> {
  e.fleet.start();
  await e.fleet.whenIdle();
}

describe('autonomy: plan', () => {
  it('stops after the explorer with the plan awaiting approval; nothing is implemented', async () => {
    const e = await engine('autonomy: plan', '- [ ] T-1 One');
    await runToIdle(e);
    const t = e.fleet.task('T-1')!;
    expect(t.status).toBe('awaiting-approval');
    expect(e.model.calls.map((c) => c.role)).toEqual(['explorer']);
    expect(t.attempts).toHaveLength(1);
    expect(t.attempts[0]!.outcome).toBe('interrupted');
    expect(t.attempts[0]!.plan).toBe('PLAN T-1: write done.txt');
  });

  it('after approval skips the explorer, gives the implementer the plan, and the stop does not use an attempt', async () => {
    const e = await engine('autonomy: plan', '- [ ] T-1 One\n  attempts: 1');
    await idle(e);
    expect(e.fleet.task('T-1')!.status).toBe('awaiting-approval');
    e.fleet.approve('T-1');
    await e.fleet.whenIdle();
    await e.fleet.stop();
    const t = e.fleet.task('T-1')!;
    expect(t.status).toBe('verified');
    expect(t.approvedPlan).toBe('PLAN T-1: write done.txt');
    expect(e.model.calls.map((c) => c.role)).toEqual(['explorer', 'implementer', 'verifier']);
    expect(e.model.calls[1]!.prompt).toContain('PLAN T-1: write done.txt');
  });

  it('gives the implementer a plan a person edited', async () => {
    const e = await engine('autonomy: plan', '- [ ] T-1 One');
    await idle(e);
    e.fleet.approve('T-1', 'EDITED: only touch done.txt\n');
    await e.fleet.whenIdle();
    await e.fleet.stop();
    const impl = e.model.calls.find((c) => c.role === 'implementer')!;
    expect(impl.prompt).toContain('EDITED: only touch done.txt');
    expect(impl.prompt).not.toContain('PLAN T-1');
    expect(e.fleet.task('T-1')!.attempts.at(-1)!.plan).toBe('EDITED: only touch done.txt');
  });

  it('refuses to approve a task that is not awaiting approval, and a task-level autonomy overrides the front matter', async () => {
    const e = await engine('autonomy: plan', '- [ ] T-1 One\n  autonomy: review');
    await idle(e);
    expect(e.fleet.task('T-1')!.status).toBe('verified');
    expect(() => e.fleet.approve('T-1')).toThrow('T-1 is verified: only awaiting-approval tasks can be approved');
    await e.fleet.stop();
  });

  it('keeps the approved plan for a later attempt; a retry forgets it and asks again', async () => {
    let pass = false;
    const e: FakeEngine = await fakeEngine('check: the-check\nautonomy: plan', '- [ ] T-1 One\n  attempts: 2', {
      script,
      run: (_c, o) => ({ exitCode: pass && e.git.files(o.cwd).has('done.txt') ? 0 : 1, output: 'FAIL\n' }),
    });
    await idle(e);
    e.fleet.approve('T-1', 'MY PLAN');
    await e.fleet.whenIdle();
    const failed = e.fleet.task('T-1')!;
    expect(failed.status).toBe('failed');
    expect(failed.gate).toBe('attempts');
    // two real attempts after the approval stop, both on the approved plan, no explorer
    expect(e.model.calls.map((c) => c.role)).toEqual(['explorer', 'implementer', 'implementer']);
    expect(e.model.calls.filter((c) => c.role === 'implementer').every((c) => c.prompt.includes('MY PLAN'))).toBe(true);

    pass = true;
    await e.fleet.retry('T-1');
    await e.fleet.whenIdle();
    await e.fleet.stop();
    const again = e.fleet.task('T-1')!;
    expect(again.status).toBe('awaiting-approval');
    expect(again.approvedPlan).toBeUndefined();
    expect(e.model.calls.at(-1)!.role).toBe('explorer');
  });

  it('discards a task awaiting approval', async () => {
    const e = await engine('autonomy: plan', '- [ ] T-1 One');
    await idle(e);
    await e.fleet.discard('T-1');
    await e.fleet.stop();
    expect(e.fleet.task('T-1')!.status).toBe('discarded');
    expect(e.model.calls.map((c) => c.role)).toEqual(['explorer']);
  });
});

describe('autonomy: auto', () => {
  it('merges a verified task by itself; review leaves it for a person', async () => {
    const e = await engine('', '- [ ] T-1 Auto\n  autonomy: auto\n- [ ] T-2 Reviewed');
    await runToIdle(e);
    expect(e.fleet.task('T-1')!.status).toBe('merged');
    expect(e.ticked).toEqual(['T-1']);
    expect(e.fleet.task('T-2')!.status).toBe('verified');
  });
});

describe('autonomy in BACKLOG.md', () => {
  it('rejects a bad value with the file, the line and what is allowed', () => {
    const front = () => parseBacklog(backlogText('autonomy: yolo', '- [ ] T-1 One'), '/r/BACKLOG.md');
    expect(front).toThrow(InputErrors);
    expect(front).toThrow(/BACKLOG\.md:2.*autonomy must be plan, review, auto, got 'yolo'/);
    const task = () => parseBacklog(backlogText('check: x', '- [ ] T-1 One\n  autonomy: later'), '/r/BACKLOG.md');
    expect(task).toThrow(/BACKLOG\.md:8.*autonomy: must be plan, review, auto, got 'later'/);
  });
});

describe('a broken lessons file', () => {
  it('costs a warning, never the attempt', async () => {
    const broken = new Lessons(
      {
        tail: async () => Promise.reject(new Error('EACCES: lessons.md')),
        append: async () => Promise.reject(new Error('EROFS')),
      },
      { enabled: true },
    );
    const e = await engine('', '- [ ] T-1 One', {
      lessons: broken,
      script: ({ role }) =>
        role === 'implementer' ? { edits: { 'done.txt': 'x' }, text: 'Done.\nLESSON: keep it short' } : {},
    });
    await runToIdle(e);
    expect(e.fleet.task('T-1')!.status).toBe('verified');
    const warnings = e.seen
      .filter((s) => s.name === 'log')
      .map((s) => s.payload as { level: string; message: string })
      .filter((l) => l.level === 'warn');
    expect(warnings.map((w) => w.message)).toEqual(['lessons: EACCES: lessons.md', 'lessons: EACCES: lessons.md']);
  });
});
