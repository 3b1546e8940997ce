import { appendFile, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LowdbStateStore } from '../../../src/adapters/store/lowdb-state.js';
import { ZERO_USAGE, type TaskState } from '../../../src/domain/types.js';
import type { StateData } from '../../../src/ports/state-store.js';

let dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
  dirs = [];
});
async function paths() {
  const dir = await mkdtemp(join(tmpdir(), 'loopfleet-state-'));
  dirs.push(dir);
  return { state: join(dir, 'state.json'), journal: join(dir, 'state.journal') };
}

const fleet = { usage: { ...ZERO_USAGE }, costUsd: 0, elapsedMs: 0, startedAt: null };
function task(id: string, reason: string | null = null): TaskState {
  return { id, title: `Task ${id}`, status: 'queued', reason } as unknown as TaskState;
}
function data(n: number): StateData {
  return {
    version: 1,
    base: 'main',
    fleet,
    tasks: Object.fromEntries(Array.from({ length: n }, (_, i) => [`T-${i}`, task(`T-${i}`)])),
  };
}

describe('the state store', () => {
  it('records a change as one journal line, leaving state.json alone, whatever the number of tasks', async () => {
    const p = await paths();
    const store = new LowdbStateStore(p.state);
    await store.save(data(2000));
    const before = await stat(p.state);
    await store.record({ base: 'main', fleet, tasks: [task('T-7', 'changed')] });
    const after = await stat(p.state);
    expect([after.ino, after.size, after.mtimeMs]).toEqual([before.ino, before.size, before.mtimeMs]);
    const lines = (await readFile(p.journal, 'utf8')).split('\n').filter(Boolean);
    expect(lines).toHaveLength(1);
    expect(lines[0]!.length).toBeLessThan(400);
    // what `status` reads: state.json with the journal replayed
    const loaded = (await new LowdbStateStore(p.state).load())!;
    expect(loaded.tasks['T-7']!.reason).toBe('changed');
    expect(Object.keys(loaded.tasks)).toHaveLength(2000);
    expect(store.wantsSave(true)).toBe(true);
    // a whole save folds the journal in
    await store.save(loaded);
    expect(await readFile(p.journal, 'utf8')).toBe('');
    expect(store.wantsSave(true)).toBe(false);
  });

  it('skips a torn last line (a crash mid-append) and cuts it off before the next change', async () => {
    const p = await paths();
    const first = new LowdbStateStore(p.state);
    await first.save(data(1));
    await first.record({ base: 'main', fleet, tasks: [task('T-0', 'one')] });
    await appendFile(p.journal, '{"seq":2,"base":"main","tasks":[{"id":"T-0","rea');
    const second = new LowdbStateStore(p.state);
    expect((await second.load())!.tasks['T-0']!.reason).toBe('one');
    await second.record({ base: 'main', fleet, tasks: [task('T-0', 'two')] });
    expect((await new LowdbStateStore(p.state).load())!.tasks['T-0']!.reason).toBe('two');
    expect((await readFile(p.journal, 'utf8')).split('\n').filter(Boolean)).toHaveLength(2);
  });

  it('never replays a line already folded into state.json (a journal read from before a fold)', async () => {
    const p = await paths();
    const store = new LowdbStateStore(p.state);
    await store.save(data(1));
    await store.record({ base: 'main', fleet, tasks: [task('T-0', 'old')] });
    const oldJournal = await readFile(p.journal, 'utf8');
    const loaded = (await new LowdbStateStore(p.state).load())!;
    loaded.tasks['T-0'] = task('T-0', 'newer');
    await store.save(loaded);
    await writeFile(p.journal, oldJournal); // as a reader that read the journal before the fold would see it
    expect((await new LowdbStateStore(p.state).load())!.tasks['T-0']!.reason).toBe('newer');
  });
});
