import { describe, expect, it } from 'vitest';
import { runExitCode } from '../../../src/commands/overnight.js';
import { ResourceLimitError } from '../../../src/domain/errors.js';
import { fakeEngine } from '../../helpers/fake-engine.js';

const errno = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('a machine limit during an attempt', () => {
  for (const code of ['EMFILE', 'ENFILE', 'ENOMEM'] as const) {
    it(`${code}: stops the run in one line naming the limit, queues the task again without charging its attempt, exit 1`, async () => {
      const e = await fakeEngine('check: the-check\nconcurrency: 1', '- [ ] T-1 One\n- [ ] T-2 Two', {
        // the check's process cannot be spawned, as under `ulimit -n 32` or a full process table
        run: (command) => {
          if (command === 'the-check') throw errno(`spawn /bin/sh ${code}`, code);
          return {};
        },
        script: ({ role, task }) => (role === 'implementer' ? { edits: { [`${task}.txt`]: 'x\n' } } : {}),
      });
      e.fleet.start();
      await e.fleet.whenIdle();
      await e.fleet.stop();
      expect(e.fleet.limit).toBeInstanceOf(ResourceLimitError);
      expect(runExitCode(e.fleet)).toBe(1);
      const logs = e.seen.filter((s) => s.name === 'log').map((s) => (s.payload as { message: string }).message);
      const named = logs.filter((m) => m.includes(`(${code})`));
      expect(named[0]).toMatch(/then start again/);
      expect(named).toHaveLength(1);
      for (const id of ['T-1', 'T-2']) {
        const t = e.fleet.task(id)!;
        expect(t.status, id).toBe('queued');
        expect(
          t.attempts.every((a) => a.outcome === 'interrupted'),
          id,
        ).toBe(true);
      }
      expect(e.fleet.task('T-1')!.reason).toContain(`(${code})`);
    });
  }

  it('finds the limit through a wrapped message or a cause, and nothing else', () => {
    expect(ResourceLimitError.of(new Error('git worktree add failed: spawn git EMFILE'))?.code).toBe('EMFILE');
    expect(ResourceLimitError.of(new Error('outer', { cause: errno('x', 'ENFILE') }))?.code).toBe('ENFILE');
    expect(ResourceLimitError.of(new Error('the check failed: exit 1'))).toBeNull();
    expect(ResourceLimitError.of(errno('no such file', 'ENOENT'))).toBeNull();
  });
});
