import { afterEach, describe, expect, it } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LowdbStateStore } from '../../src/adapters/store/lowdb-state.js';
import { findRepo } from '../../src/commands/repo.js';
import { statusRows, statusTable } from '../../src/commands/status.js';
import type { ConflictDetail } from '../../src/domain/types.js';
import { STATE_VERSION } from '../../src/ports/state-store.js';
import { fakeTask } from '../helpers/fake-fleet.js';
import { backlog } from '../helpers/fleet-harness.js';
import { makeRepo } from '../helpers/git-repo.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

const HUNK = '<<<<<<< loop/T-1\nmine\n=======\ntheirs\n>>>>>>> loop/T-2';
const detail = (withName: string, files: string[]): ConflictDetail => ({
  with: withName,
  files,
  hunks: [{ file: files[0]!, hunk: HUNK }],
});

describe('status --json on conflicts', () => {
  it('gives verified and conflict tasks their conflicts with the files, without hunks; [] to the others', async () => {
    const r = await makeRepo({
      'BACKLOG.md': backlog(
        'check: "true"',
        '- [ ] T-1 One\n- [ ] T-2 Two\n- [ ] T-3 Three\n- [ ] T-4 Four\n- [ ] T-5 Five',
      ),
    });
    cleanups.push(r.cleanup);
    const repo = await findRepo(r.root);
    const tasks = [
      fakeTask('T-1', {
        title: 'One',
        status: 'verified',
        conflictsWith: ['main', 'T-2'],
        conflicts: [detail('main', ['README.md']), detail('T-2', ['src/calc.js'])],
      }),
      fakeTask('T-2', {
        title: 'Two',
        status: 'verified',
        conflictsWith: ['T-1'],
        conflicts: [detail('T-1', ['src/calc.js'])],
      }),
      fakeTask('T-3', {
        title: 'Three',
        status: 'conflict',
        reason: 'merge into main conflicts in src/a.js',
        conflicts: [detail('main', ['src/a.js'])],
      }),
      fakeTask('T-4', {
        title: 'Four',
        status: 'queued',
        conflictsWith: ['T-1'],
        conflicts: [detail('T-1', ['src/calc.js'])],
      }),
    ];
    await new LowdbStateStore(repo.statePath).save({
      version: STATE_VERSION,
      base: 'main',
      fleet: { usage: tasks[0]!.usage, costUsd: 0, elapsedMs: 0, startedAt: null },
      tasks: Object.fromEntries(tasks.map((t) => [t.id, t])),
    });

    const rows = await statusRows(repo);
    expect(rows.map((row) => [row.id, row.conflictsWith, row.conflicts])).toEqual([
      [
        'T-1',
        ['main', 'T-2'],
        [
          { with: 'main', files: ['README.md'] },
          { with: 'T-2', files: ['src/calc.js'] },
        ],
      ],
      ['T-2', ['T-1'], [{ with: 'T-1', files: ['src/calc.js'] }]],
      ['T-3', [], [{ with: 'main', files: ['src/a.js'] }]],
      ['T-4', [], []],
      ['T-5', [], []],
    ]);
    expect(JSON.stringify(rows)).not.toContain('<<<<<<<');
    const keys = Object.keys(rows[0]!);
    expect(keys.indexOf('conflicts')).toBe(keys.indexOf('conflictsWith') + 1);

    // the table keeps one short line per task
    const table = statusTable(rows).split('\n');
    expect(table[1]).toMatch(/T-1 .*⚠ conflicts with main, T-2$/);
    expect(table[1]).not.toContain('calc.js');
  });
});

describe('status on a flagged worker', () => {
  it('status --json has the flag with the worker, the attempt and why; the table names the worker', async () => {
    const r = await makeRepo({ 'BACKLOG.md': backlog('check: "true"', '- [ ] T-1 One\n- [ ] T-2 Two') });
    cleanups.push(r.cleanup);
    const repo = await findRepo(r.root);
    const flag = {
      worker: 'host-a-42-9f1c2e',
      attempt: 2,
      reason: 'worker claimed verified; coordinator check failed: check `npm test` exited 1',
    };
    const tasks = [
      fakeTask('T-1', { title: 'One', status: 'queued', worker: flag.worker, workerFlag: flag }),
      fakeTask('T-2', { title: 'Two', status: 'verified', worker: 'host-b-7' }),
    ];
    await new LowdbStateStore(repo.statePath).save({
      version: STATE_VERSION,
      base: 'main',
      fleet: { usage: tasks[0]!.usage, costUsd: 0, elapsedMs: 0, startedAt: null },
      tasks: Object.fromEntries(tasks.map((t) => [t.id, t])),
    });

    const rows = await statusRows(repo);
    expect(rows[0]!.workerFlag).toEqual(flag);
    expect(rows[1]!.workerFlag).toBeUndefined();
    const table = statusTable(rows).split('\n');
    expect(table[1]).toMatch(/T-1 .*⚑ worker host-a-42-9f1c2e flagged$/);
    expect(table[2]).not.toContain('⚑');
  });
});

describe('status at the review capacity', () => {
  it('says why a queued task that needs a person does not start; tasks that land by themselves are not held', async () => {
    const r = await makeRepo({
      'BACKLOG.md': backlog(
        'check: "true"\nreview_capacity: 2',
        '- [ ] T-1 One\n- [ ] T-2 Two\n- [ ] T-3 Three\n- [ ] T-4 Four\n  autonomy: auto\n- [ ] T-5 Five',
      ),
    });
    cleanups.push(r.cleanup);
    const repo = await findRepo(r.root);
    const tasks = [
      fakeTask('T-1', { title: 'One', status: 'verified' }),
      fakeTask('T-2', { title: 'Two', status: 'awaiting-approval' }),
      fakeTask('T-3', { title: 'Three', status: 'queued' }),
      fakeTask('T-4', { title: 'Four', status: 'queued' }),
    ];
    await new LowdbStateStore(repo.statePath).save({
      version: STATE_VERSION,
      base: 'main',
      fleet: { usage: tasks[0]!.usage, costUsd: 0, elapsedMs: 0, startedAt: null },
      tasks: Object.fromEntries(tasks.map((t) => [t.id, t])),
    });

    const rows = await statusRows(repo);
    const held = { running: 0, waiting: 2, capacity: 2 };
    expect(rows.map((row) => [row.id, row.waitingForReview])).toEqual([
      ['T-1', null],
      ['T-2', null],
      ['T-3', held],
      ['T-4', null],
      ['T-5', held],
    ]);
    const table = statusTable(rows).split('\n');
    expect(table[3]).toMatch(/T-3 .*Three — waiting for review: 2 of 2$/);
    expect(table[4]).not.toContain('waiting for review');

    // One place freed (T-1 merged): nothing is held.
    await writeFile(
      join(r.root, 'BACKLOG.md'),
      backlog(
        'check: "true"\nreview_capacity: 2',
        '- [x] T-1 One\n- [ ] T-2 Two\n- [ ] T-3 Three\n- [ ] T-4 Four\n  autonomy: auto\n- [ ] T-5 Five',
      ),
    );
    expect((await statusRows(repo)).map((row) => row.waitingForReview ?? null)).toEqual([null, null, null, null, null]);
  });
});

describe('status on a split task', () => {
  it("names each part's parent, and the parts of the task", async () => {
    const r = await makeRepo({
      'BACKLOG.md': backlog(
        'check: "true"',
        '- [ ] T-7 Big\n  split: auto\n- [ ] T-7.1 One\n- [ ] T-7.2 Two\n  after: T-7.1\n- [ ] T-8 Other',
      ),
    });
    cleanups.push(r.cleanup);
    const repo = await findRepo(r.root);
    const tasks = [
      fakeTask('T-7', { title: 'Big', status: 'queued', parts: ['T-7.1', 'T-7.2'] }),
      fakeTask('T-7.1', { title: 'One', status: 'verified' }),
    ];
    await new LowdbStateStore(repo.statePath).save({
      version: STATE_VERSION,
      base: 'main',
      fleet: { usage: tasks[0]!.usage, costUsd: 0, elapsedMs: 0, startedAt: null },
      tasks: Object.fromEntries(tasks.map((t) => [t.id, t])),
    });
    const rows = await statusRows(repo);
    expect(rows.map((row) => [row.id, row.parent, row.parts])).toEqual([
      ['T-7', null, ['T-7.1', 'T-7.2']],
      ['T-7.1', 'T-7', undefined],
      ['T-7.2', 'T-7', undefined],
      ['T-8', null, undefined],
    ]);
  });
});
