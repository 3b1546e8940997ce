import { writeFileSync } from 'node:fs';
import { mkdtemp, readdir, rename, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { watchBacklog, type BacklogChange, type BacklogWatcher } from '../../../src/core/backlog/watch.js';
import { tickDone } from '../../../src/core/backlog/write-back.js';
import { FsBacklogFile } from '../../../src/adapters/store/file-store.js';
import { FakeBacklogFile } from '../../helpers/fake-backlog-file.js';

let dir: string;
let file: string;
let watcher: BacklogWatcher | null;
let changes: BacklogChange[];

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Resolves once `changes` has `n` entries; fails after `ms`. */
async function waitForChanges(n: number, ms = 1000): Promise<void> {
  const until = Date.now() + ms;
  while (changes.length < n) {
    if (Date.now() > until) throw new Error(`expected ${n} change(s) within ${ms} ms, got ${changes.length}`);
    await sleep(10);
  }
}

const ids = (c: BacklogChange | undefined): string[] => {
  if (!c || 'error' in c || 'gone' in c) throw new Error('expected a parsed backlog');
  return c.backlog.tasks.map((t) => `${t.id}${t.done ? '✓' : ''}`);
};

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'loopfleet-watch-'));
  file = join(dir, 'BACKLOG.md');
  await writeFile(file, '- [ ] T-1 One\n');
  changes = [];
  watcher = null;
});
afterEach(async () => {
  watcher?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('watchBacklog', () => {
  it('sees an editor-style save (write a copy, rename it over) within a second', async () => {
    watcher = await watchBacklog(new FsBacklogFile(file), (c) => changes.push(c), { debounceMs: 50 });
    const copy = join(dir, '.BACKLOG.md.swp');
    await writeFile(copy, '- [ ] T-1 One\n- [ ] T-2 Two\n');
    await rename(copy, file);
    await waitForChanges(1);
    expect(ids(changes[0])).toEqual(['T-1', 'T-2']);

    // The watch outlives the replaced file.
    await writeFile(copy, '- [ ] T-1 One\n- [ ] T-2 Two\n- [ ] T-3 Three\n');
    await rename(copy, file);
    await waitForChanges(2);
    expect(ids(changes[1])).toEqual(['T-1', 'T-2', 'T-3']);
  });

  it('reports a backlog deleted (and still gone after the grace time) as gone, and its return as a change', async () => {
    watcher = await watchBacklog(new FsBacklogFile(file), (c) => changes.push(c), { debounceMs: 20, goneAfterMs: 150 });
    await rm(file);
    await waitForChanges(1);
    expect(changes[0]).toEqual({ gone: true });
    await writeFile(file, '- [ ] T-1 One\n');
    await waitForChanges(2);
    expect(ids(changes[1])).toEqual(['T-1']);
  });

  it('does not call a file gone that an editor removes and writes back within the grace time', async () => {
    watcher = await watchBacklog(new FsBacklogFile(file), (c) => changes.push(c), { debounceMs: 20, goneAfterMs: 400 });
    await rm(file);
    await sleep(60);
    await writeFile(file, '- [ ] T-1 One\n- [ ] T-2 Two\n');
    await waitForChanges(1);
    await sleep(500);
    expect(changes).toHaveLength(1);
    expect(ids(changes[0])).toEqual(['T-1', 'T-2']);
  });

  it('debounces a burst of writes into one parse of the final text', async () => {
    watcher = await watchBacklog(new FsBacklogFile(file), (c) => changes.push(c), { debounceMs: 100 });
    // Written without yielding: every change event of the burst is queued before the watcher sees the first,
    // so one debounce window holds them all however slow the machine.
    for (let n = 2; n <= 5; n++)
      writeFileSync(file, Array.from({ length: n }, (_, i) => `- [ ] T-${i + 1} t\n`).join(''));
    await waitForChanges(1);
    await sleep(200);
    expect(changes).toHaveLength(1);
    expect(ids(changes[0])).toHaveLength(5);
  });

  it('stays silent when the text did not change, and for other files', async () => {
    watcher = await watchBacklog(new FsBacklogFile(file), (c) => changes.push(c), { debounceMs: 30 });
    await writeFile(file, '- [ ] T-1 One\n');
    await utimes(file, new Date(), new Date());
    await writeFile(join(dir, 'other.md'), 'x');
    await sleep(300);
    expect(changes).toEqual([]);
  });

  it('reports problems as InputErrors and recovers on the next good save', async () => {
    watcher = await watchBacklog(new FsBacklogFile(file), (c) => changes.push(c), { debounceMs: 30 });
    await writeFile(file, '- [ ] T-1 One\n- [ ] T-1 Again\n');
    await waitForChanges(1);
    const first = changes[0]!;
    expect('error' in first && first.error.errors[0]!.problem).toContain('duplicate task id T-1');
    await writeFile(file, '- [ ] T-1 One\n- [ ] T-2 Again\n');
    await waitForChanges(2);
    expect(ids(changes[1])).toEqual(['T-1', 'T-2']);
  });

  it('ignores loopfleet’s own write', async () => {
    watcher = await watchBacklog(new FsBacklogFile(file), (c) => changes.push(c), { debounceMs: 30 });
    const w = watcher;
    await tickDone(new FsBacklogFile(file), 'T-1', { onWrite: (before, after) => w.expectWrite(before, after) });
    await sleep(300);
    expect(changes).toEqual([]);
  });

  it('reports a person’s edit that loopfleet’s write folded in', async () => {
    // The debounce is long enough that the write-back lands before the watcher reads the person's save.
    watcher = await watchBacklog(new FsBacklogFile(file), (c) => changes.push(c), { debounceMs: 300 });
    const w = watcher;
    await writeFile(file, '- [ ] T-1 One\n- [ ] T-2 Two\n');
    await tickDone(new FsBacklogFile(file), 'T-1', { onWrite: (before, after) => w.expectWrite(before, after) });
    await waitForChanges(1);
    expect(ids(changes[0])).toEqual(['T-1✓', 'T-2']);
  });

  it('checks once at the start when given the text the caller parsed', async () => {
    watcher = await watchBacklog(new FsBacklogFile(file), (c) => changes.push(c), { debounceMs: 10, initial: '' });
    await waitForChanges(1);
    expect(ids(changes[0])).toEqual(['T-1']);
  });

  it('stops on close', async () => {
    watcher = await watchBacklog(new FsBacklogFile(file), (c) => changes.push(c), { debounceMs: 10 });
    watcher.close();
    await writeFile(file, '- [ ] T-1 One\n- [ ] T-2 Two\n');
    await sleep(200);
    expect(changes).toEqual([]);
    expect(await readdir(dir)).toEqual(['BACKLOG.md']);
  });
});

describe('watchBacklog on an in-memory BacklogFile', () => {
  it('reports a save, stays silent for its own write, and reports a save folded into one', async () => {
    const backlog = new FakeBacklogFile('- [ ] T-1 One\n');
    watcher = await watchBacklog(backlog, (c) => changes.push(c), { debounceMs: 1 });
    const w = watcher;
    backlog.save('- [ ] T-1 One\n- [ ] T-2 Two\n');
    await waitForChanges(1);
    expect(ids(changes[0])).toEqual(['T-1', 'T-2']);

    await tickDone(backlog, 'T-1', { onWrite: (before, after) => w.expectWrite(before, after) });
    await sleep(20);
    expect(changes).toHaveLength(1);

    // A person's save lands between loopfleet's read and its write: the write keeps it, and it is reported.
    backlog.beforeReplace = () => backlog.save('- [x] T-1 One\n- [ ] T-2 Two\n- [ ] T-3 Three\n');
    await tickDone(backlog, 'T-2', { onWrite: (before, after) => w.expectWrite(before, after) });
    await waitForChanges(2);
    expect(ids(changes.at(-1))).toEqual(['T-1✓', 'T-2✓', 'T-3']);
  });
});
