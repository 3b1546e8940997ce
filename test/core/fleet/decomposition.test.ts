import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Fleet } from '../../../src/core/fleet/fleet.js';
import { backlog, openFleet } from '../../helpers/fleet-harness.js';
import { fakeEngine, type FakeEngine } from '../../helpers/fake-engine.js';
import { git, makeRepo, read } from '../../helpers/git-repo.js';
import { eventually } from '../../helpers/wait.js';
import type { FakeScript, FakeTurn } from '../../helpers/fake-model.js';
import { splitFigures } from '../../../src/core/report/split-figures.js';

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

const partsBlock = (parts: unknown[]) => `I split it.\n\n\`\`\`parts\n${JSON.stringify(parts)}\n\`\`\`\n`;

/** Resolves once `n` callers have arrived: the callers provably run at the same time. */
function barrier(n: number): () => Promise<void> {
  let arrived = 0;
  let open!: () => void;
  const all = new Promise<void>((resolve) => (open = resolve));
  return () => {
    if (++arrived === n) open();
    return all;
  };
}

describe('a task split into parts, on a real repository', () => {
  it('runs the disjoint parts at once and the overlapping ones in order; all land, the task is done', async () => {
    const r = await makeRepo({
      'BACKLOG.md': backlog(
        'check: test ! -f bad.txt\nreview: false\nconcurrency: 4\nautonomy: auto\nsandbox: off',
        '- [ ] T-1 Do the big thing\n  split: auto',
      ),
      'shared.txt': 'base\n',
    });
    cleanups.push(r.cleanup);
    let fleet: Fleet | null = null;
    const together = barrier(3);
    /** T-1.2's status when each task made its first model call */
    const seenAtStart = new Map<string, string | undefined>();
    /** appends `word` to shared.txt as the implementer finds it in its worktree */
    const append = async (workdir: string, word: string) => {
      const path = join(workdir, 'shared.txt');
      await writeFile(path, `${await readFile(path, 'utf8')}${word}\n`);
    };
    const script: FakeScript = ({ role, task, request }): FakeTurn => {
      if (!seenAtStart.has(task)) seenAtStart.set(task, fleet?.task('T-1.2')?.status);
      if (role === 'explorer' && task === 'T-1')
        return {
          text: partsBlock([
            { title: 'Add a', files: ['a.txt'] },
            { title: 'Say one in shared', files: ['shared.txt'] },
            { title: 'Say two in shared', files: ['shared.txt'] },
            { title: 'Add b', files: ['b.txt'] },
          ]),
        };
      if (role !== 'implementer') return {};
      // The three disjoint parts each wait until all three implement: they provably run at once.
      if (task === 'T-1.1') return { edits: { 'a.txt': 'a\n' }, until: together() };
      if (task === 'T-1.4') return { edits: { 'b.txt': 'b\n' }, until: together() };
      if (task === 'T-1.2') return { until: together().then(() => append(request.workdir, 'one')) };
      if (task === 'T-1.3') return { until: append(request.workdir, 'two') };
      return { edits: { 'other.txt': 'x\n' } };
    };
    const h = await openFleet(r.root, script);
    fleet = h.fleet;
    h.fleet.start();
    await h.fleet.whenIdle();
    await h.session.close();
    const status = (id: string) => h.fleet.task(id)?.status;
    expect(['T-1.1', 'T-1.2', 'T-1.3', 'T-1.4', 'T-1'].map((id) => `${id} ${status(id)}`)).toEqual([
      'T-1.1 merged',
      'T-1.2 merged',
      'T-1.3 merged',
      'T-1.4 merged',
      'T-1 merged',
    ]);
    // T-1.3 shares shared.txt with T-1.2: it started on a base that holds T-1.2's change.
    expect(seenAtStart.get('T-1.3')).toBe('merged');
    expect(await read(r.root, 'shared.txt')).toBe('base\none\ntwo\n');
    expect(await read(r.root, 'a.txt')).toBe('a\n');
    expect(h.fleet.tasks().filter((t) => t.status === 'conflict')).toEqual([]);
    expect(h.fleet.task('T-1')!.parts).toEqual(['T-1.1', 'T-1.2', 'T-1.3', 'T-1.4']);
    expect(h.fleet.task('T-1')!.reason).toMatch(/its 4 parts landed .* and its check passes on main/);
    // BACKLOG.md shows the parts under their task, in landing order, ticked as they landed.
    const text = await read(r.root, 'BACKLOG.md');
    expect(text).toContain(
      [
        '- [x] T-1 Do the big thing',
        '  split: auto',
        '- [x] T-1.1 Add a',
        '  Part of T-1. Planned files: a.txt',
        '- [x] T-1.2 Say one in shared',
        '  Part of T-1. Planned files: shared.txt',
        '- [x] T-1.3 Say two in shared',
        '  after: T-1.2',
        '  Part of T-1. Planned files: shared.txt',
        '- [x] T-1.4 Add b',
        '  Part of T-1. Planned files: b.txt',
      ].join('\n'),
    );
    expect(await git(r.root, 'status', '--porcelain', '--', 'shared.txt')).toBe('');
    // The report's figures: four parts, the three disjoint ones at once, no conflict on the way to main.
    const figures = splitFigures(h.fleet.task('T-1')!, (id) => h.fleet.task(id), Date.now())!;
    expect(figures).toMatchObject({ parts: 4, conflicts: 0 });
    expect(figures.atOnce).toBeGreaterThanOrEqual(3);
    expect(figures.serialMs).toBeGreaterThan(figures.wallMs);
  });
});

describe('a person edits the parts in BACKLOG.md', () => {
  /**
   * A fleet watching BACKLOG.md on a real repository whose T-1 splits into T-1.1 (a.txt) and T-1.2 (b.txt);
   * the fleet pauses the moment it splits, so the parts stay queued until the test has edited them.
   */
  async function splitAndPause(implement: (task: string) => FakeTurn, plan: () => FakeTurn = () => ({})) {
    const r = await makeRepo({
      'BACKLOG.md': backlog(
        'check: test ! -f bad.txt\nreview: false\nconcurrency: 2\nautonomy: auto\nsandbox: off',
        '- [ ] T-1 Do the big thing\n  split: auto\n- [ ] T-2 Something else',
      ),
    });
    cleanups.push(r.cleanup);
    let splits = 0;
    const script: FakeScript = ({ role, task }) => {
      if (role === 'explorer' && task === 'T-1')
        return splits++ === 0
          ? {
              text: partsBlock([
                { title: 'Add a', files: ['a.txt'] },
                { title: 'Add b', files: ['b.txt'] },
              ]),
            }
          : plan();
      return role === 'implementer' ? implement(task) : {};
    };
    const h = await openFleet(r.root, script, { watch: true });
    cleanups.push(() => h.session.close());
    h.fleet.events.on('backlog', ({ added }) => {
      if (added.includes('T-1.1')) h.fleet.pause();
    });
    h.fleet.start();
    // The parts are written under their task, and nothing else has started.
    await eventually(async () => ((await read(r.root, 'BACKLOG.md')).includes('T-1.2 Add b') ? true : undefined));
    await eventually(() => (h.fleet.tasks().some((t) => t.status === 'running') ? undefined : true));
    const edit = async (change: (text: string) => string) =>
      writeFile(join(r.root, 'BACKLOG.md'), change(await read(r.root, 'BACKLOG.md')));
    return { root: r.root, h, edit };
  }

  it('waits for a part added by hand and no longer for a removed one; the task lands with the parts it lists', async () => {
    const { root, h, edit } = await splitAndPause((task) => ({ edits: { [`${task}.txt`]: `${task}\n` } }));
    const logs: string[] = [];
    h.fleet.events.on('log', ({ id, message }) => logs.push(`${id} ${message}`));
    await edit((text) =>
      text.replace('- [ ] T-1.2 Add b\n  Part of T-1. Planned files: b.txt\n', '- [ ] T-1.5 Add c, written by hand\n'),
    );
    await eventually(() => (h.fleet.task('T-1')!.parts!.includes('T-1.5') ? true : undefined));
    expect(h.fleet.task('T-1')!.parts).toEqual(['T-1.1', 'T-1.5']);
    expect(logs).toContain('T-1 its part T-1.2 was removed from BACKLOG.md: it no longer waits for it');
    expect(logs).toContain('T-1 T-1.5 added under it in BACKLOG.md: it waits for it too');
    h.fleet.resume();
    await h.fleet.whenIdle();
    const status = (id: string) => `${id} ${h.fleet.task(id)?.status}`;
    expect(['T-1.1', 'T-1.5', 'T-1', 'T-2'].map(status)).toEqual([
      'T-1.1 merged',
      'T-1.5 merged',
      'T-1 merged',
      'T-2 merged',
    ]);
    expect(h.fleet.task('T-1')!.reason).toMatch(/^its 2 parts landed \(T-1\.1, T-1\.5\)/);
    // The removed part never ran; the one added by hand did, on main.
    expect(h.model.calls.some((c) => c.task === 'T-1.2')).toBe(false);
    expect(await read(root, 'T-1.5.txt')).toBe('T-1.5\n');
  });

  it('fails a task whose parts were all removed, naming them; r plans it again', async () => {
    const { root, h, edit } = await splitAndPause(
      (task) => ({ edits: { [`${task}.txt`]: 'x\n' } }),
      () => ({ text: 'Plan: do it in one go.' }),
    );
    await edit((text) => text.replace(/- \[ \] T-1\.1[\s\S]*?(?=- \[ \] T-2)/, ''));
    await eventually(() => (h.fleet.task('T-1')!.status === 'failed' ? true : undefined));
    expect(h.fleet.task('T-1')).toMatchObject({
      reason: 'its parts T-1.1, T-1.2 were removed from BACKLOG.md; r plans it again',
    });
    expect(h.fleet.task('T-1')!.parts).toBeUndefined();
    await h.fleet.retry('T-1');
    h.fleet.resume();
    await h.fleet.whenIdle();
    // Planned afresh as one task: its explorer ran again and its implementer landed the work itself.
    expect(h.fleet.task('T-1')!.status).toBe('merged');
    expect(h.model.calls.filter((c) => c.task === 'T-1').map((c) => c.role)).toEqual([
      'explorer',
      'explorer',
      'implementer',
    ]);
    expect(await read(root, 'T-1.txt')).toBe('x\n');
    expect(h.model.calls.some((c) => c.task.startsWith('T-1.'))).toBe(false);
  });
});

describe('a part that fails its gates', () => {
  it('stops the part that lands after it, and the task names the part and why; the other part lands', async () => {
    let e!: FakeEngine;
    e = await fakeEngine(
      'check: the-check\nreview: false\nautonomy: auto\nconcurrency: 3\ngates:\n  attempts: 1',
      '- [ ] T-1 Do the big thing\n  split: auto',
      {
        script: ({ role, task }) => {
          if (role === 'explorer' && task === 'T-1')
            return {
              text: partsBlock([
                { title: 'Add a', files: ['a.txt'] },
                { title: 'Break shared', files: ['shared.txt'] },
                { title: 'Build on shared', files: ['shared.txt', 'c.txt'] },
              ]),
            };
          if (role !== 'implementer') return {};
          return { edits: task === 'T-1.2' ? { 'bad.txt': 'x' } : { [`${task}.txt`]: 'x' } };
        },
        run: (_c, o) => ({ exitCode: e.git.files(o.cwd).has('bad.txt') ? 1 : 0, output: 'bad.txt is there\n' }),
      },
    );
    e.fleet.start();
    await e.fleet.whenIdle();
    await e.fleet.stop();
    const t = (id: string) => e.fleet.task(id)!;
    expect(t('T-1.1').status).toBe('merged');
    expect(t('T-1.2')).toMatchObject({ status: 'failed', gate: 'attempts' });
    expect(t('T-1.3')).toMatchObject({ status: 'failed', reason: 'stopped: it lands after T-1.2, which failed' });
    expect(t('T-1.3').attempts).toEqual([]);
    expect(t('T-1').status).toBe('failed');
    expect(t('T-1').reason).toMatch(/^part T-1\.2 failed: .*attempts/);
    expect(e.model.calls.some((c) => c.task === 'T-1.3')).toBe(false);
  });
});

describe('a split under autonomy: plan', () => {
  it('waits for approval like a plan; the approved split queues its parts, which wait for approval in turn', async () => {
    const e = await fakeEngine('check: the-check\nautonomy: plan', '- [ ] T-1 Do the big thing\n  split: auto', {
      script: ({ role, task }) =>
        role === 'explorer' && task === 'T-1'
          ? {
              text: partsBlock([
                { title: 'Add a', files: ['a.txt'] },
                { title: 'Add b', files: ['b.txt'] },
              ]),
            }
          : {},
    });
    e.fleet.start();
    await e.fleet.whenIdle();
    expect(e.fleet.task('T-1')!.status).toBe('awaiting-approval');
    expect(e.fleet.tasks().map((t) => t.id)).toEqual(['T-1']);
    e.fleet.approve('T-1');
    await e.fleet.whenIdle();
    await e.fleet.stop();
    expect(e.fleet.tasks().map((t) => `${t.id} ${t.status}`)).toEqual([
      'T-1 queued',
      'T-1.1 awaiting-approval',
      'T-1.2 awaiting-approval',
    ]);
    expect(e.fleet.task('T-1')!.reason).toBe(
      'split into 2 parts: T-1.1, T-1.2; done once they have landed and its check passes',
    );
    // Splitting used no attempt, and no implementer ran for the task itself.
    expect(e.fleet.task('T-1')!.attempts.map((a) => a.outcome)).toEqual(['interrupted', 'interrupted']);
    expect(e.model.calls.filter((c) => c.task === 'T-1').map((c) => c.role)).toEqual(['explorer']);
  });
});
