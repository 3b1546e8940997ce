import { describe, expect, it } from 'vitest';
import { runExitCode } from '../../../src/commands/overnight.js';
import { fakeEngine } from '../../helpers/fake-engine.js';

const edits = ({ role, task }: { role: string; task: string }) =>
  role === 'implementer' ? { edits: { [`${task}.txt`]: 'x\n' } } : {};

describe('BACKLOG.md deleted while the fleet runs', () => {
  it('lets the running task finish, starts nothing else, ends unfinished (exit 1); the file back, work goes on', async () => {
    const e = await fakeEngine('check: the-check\nconcurrency: 1', '- [ ] T-1 One\n- [ ] T-2 Two', { script: edits });
    e.fleet.start();
    e.fleet.backlogGone();
    await e.fleet.whenIdle();
    expect(e.fleet.task('T-1')!.status).toBe('verified');
    expect(e.fleet.task('T-2')!.status).toBe('queued');
    expect(e.fleet.task('T-2')!.attempts).toHaveLength(0);
    expect(e.fleet.backlogMissing).toBe(true);
    expect(runExitCode(e.fleet)).toBe(1);
    expect(
      e.seen.some(
        (s) =>
          s.name === 'log' &&
          /deleted or renamed: running tasks finish, T-2 will not start/.test(
            String((s.payload as { message: string }).message),
          ),
      ),
    ).toBe(true);

    e.fleet.backlogBack();
    await e.fleet.whenIdle();
    expect(e.fleet.task('T-2')!.status).toBe('verified');
    expect(runExitCode(e.fleet)).toBe(0);
  });
});
