import { appendFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { LowdbStateStore } from '../../src/adapters/store/lowdb-state.js';
import { runExitCode } from '../../src/commands/overnight.js';
import { DiskFullError } from '../../src/domain/errors.js';
import { totalTokens, type TaskState } from '../../src/domain/types.js';
import type { StateChange, StateData } from '../../src/ports/state-store.js';
import { fakeEngine } from '../helpers/fake-engine.js';
import { FakeStateStore } from '../helpers/fake-state-store.js';

/** A state store on a disk that fills up once the first tokens are saved, until it is freed. */
class FillingStore extends FakeStateStore {
  full = false;
  override async save(data: StateData): Promise<void> {
    if (this.full) throw new DiskFullError('/repo/.loop-worktrees/state.json');
    await super.save(data);
    if (Object.values(data.tasks).some((t) => totalTokens(t.usage) > 0)) this.full = true;
  }
}

describe('a full disk', () => {
  it('stops the run with "disk full" (exit 1, no stack), keeps every token in memory and writes them once there is room', async () => {
    const store = new FillingStore();
    const e = await fakeEngine('check: the-check\nconcurrency: 1', '- [ ] T-1 One\n- [ ] T-2 Two', {
      store,
      script: ({ role, task }) => (role === 'implementer' ? { edits: { [`${task}.txt`]: 'x\n' } } : {}),
    });
    e.fleet.start();
    await e.fleet.whenIdle();
    await e.fleet.stop().catch(() => undefined);
    expect(e.fleet.diskFull).toBeInstanceOf(DiskFullError);
    expect(runExitCode(e.fleet)).toBe(1);
    const logs = e.seen.filter((s) => s.name === 'log').map((s) => (s.payload as { message: string }).message);
    expect(logs.some((m) => m.startsWith('disk full: /repo/.loop-worktrees/state.json could not be written'))).toBe(
      true,
    );
    // the run stopped: the task it was on is back in the queue, its attempt interrupted, not failed
    expect(e.fleet.task('T-2')!.status).toBe('queued');
    expect(e.fleet.task('T-2')!.attempts.map((a) => a.outcome)).toEqual(['interrupted']);
    const spent = totalTokens(e.fleet.task('T-1')!.usage);
    expect(spent).toBeGreaterThan(0);

    // room again: the next save writes everything the run spent
    store.full = false;
    await e.state.flush();
    const saved = (await store.load())!.tasks['T-1'] as TaskState;
    expect(totalTokens(saved.usage)).toBe(spent);
  });
});

const isRoot = process.getuid?.() === 0;

/** The real store on a real (small tmpfs) disk that fills up once the first tokens are recorded. */
class FillingDisk extends LowdbStateStore {
  filled = false;
  constructor(readonly dir: string) {
    super(join(dir, '.loop-worktrees', 'state.json'));
  }
  override async record(change: StateChange): Promise<void> {
    await super.record(change);
    if (!this.filled && change.tasks.some((t) => totalTokens(t.usage) > 0)) {
      this.filled = true;
      await fillDisk(this.dir);
    }
  }
}

async function fillDisk(dir: string): Promise<void> {
  const filler = join(dir, 'filler');
  await writeFile(filler, Buffer.alloc(8 << 20)).catch(() => undefined);
  for (;;) {
    try {
      await appendFile(filler, Buffer.alloc(512));
    } catch {
      return;
    }
  }
}

describe.skipIf(!isRoot)('a full disk, for real (a small tmpfs)', () => {
  it('keeps every token spent: after the stop, the state on disk holds what the tasks spent', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'loopfleet-full-'));
    await execa('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', dir]);
    try {
      const store = new FillingDisk(dir);
      const e = await fakeEngine('check: the-check\nconcurrency: 1', '- [ ] T-1 One\n- [ ] T-2 Two', {
        store: store as unknown as FakeStateStore,
        script: ({ role, task }) => (role === 'implementer' ? { edits: { [`${task}.txt`]: 'x\n' } } : {}),
      });
      e.fleet.start();
      await e.fleet.whenIdle();
      await e.fleet.stop().catch(() => undefined);
      expect(store.filled).toBe(true);
      expect(e.fleet.diskFull).toBeInstanceOf(DiskFullError);
      // still full: what a later `status` or start reads
      const saved = (await new LowdbStateStore(join(dir, '.loop-worktrees', 'state.json')).load())!;
      for (const id of ['T-1', 'T-2']) {
        const spent = totalTokens(e.fleet.task(id)!.usage);
        expect(totalTokens(saved.tasks[id]!.usage), id).toBe(spent);
      }
      expect(totalTokens(saved.tasks['T-1']!.usage)).toBeGreaterThan(0);
      expect(totalTokens(saved.fleet.usage)).toBe(totalTokens(e.state.fleet.usage));
    } finally {
      await execa('umount', [dir]);
      await rm(dir, { recursive: true, force: true });
    }
  });
});
