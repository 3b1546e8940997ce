import { afterEach, describe, expect, it } from 'vitest';
import { findRepo } from '../../src/commands/repo.js';
import { openSession } from '../../src/commands/session.js';
import { ExecaRunner } from '../../src/adapters/sandbox/execa-runner.js';
import { PidsCgroup } from '../../src/adapters/sandbox/pids.js';
import { FakeModel } from '../helpers/fake-model.js';
import { backlog } from '../helpers/fleet-harness.js';
import { makeRepo } from '../helpers/git-repo.js';

/*
 * A fork bomb in a check, through the real pipeline and the real sandbox, with the sandbox's process limit
 * set to 64 (the default, 4096, would need a bigger bomb). The bomb is bounded (2,000 sleeping children at
 * most), so the test cannot hang the machine even without the limit.
 */

const probe = await PidsCgroup.create(8);
await probe?.remove();
const available = await new ExecaRunner().sandboxAvailable();

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups) await c();
  cleanups = [];
});

const BOMB = 'n=0; while [ $n -lt 2000 ]; do sleep 30 & n=$((n+1)); done; echo all 2000 started; wait';

describe.runIf(available && probe !== null)('a fork bomb in the check', () => {
  it('ends the attempt at the process limit: the task fails, and the check output says why', async () => {
    const r = await makeRepo({
      'BACKLOG.md': backlog(`check: ${JSON.stringify(BOMB)}\nreview: false`, '- [ ] T-1 Add a file\n  attempts: 1'),
      'README.md': 'hi\n',
    });
    cleanups.push(r.cleanup);
    const session = await openSession(await findRepo(r.root), {
      overrides: {},
      autoMerge: false,
      watch: false,
      env: { ...process.env, ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' },
      services: (s) => {
        const model = new FakeModel(({ role }) => (role === 'implementer' ? { edits: { 'done.txt': 'done\n' } } : {}));
        return { ...s, runner: new ExecaRunner({ maxProcesses: 64 }), model, cliModel: model };
      },
    });
    session.fleet.start();
    await session.fleet.whenIdle();
    await session.close();
    const task = session.fleet.task('T-1')!;
    const attempt = task.attempts.at(-1)!;
    expect({ status: task.status, outcome: attempt.outcome }).toEqual({ status: 'failed', outcome: 'check-failed' });
    expect(attempt.reason).toMatch(/killed/);
    expect(attempt.check?.outputTail).toContain(
      'the sandbox reached its process limit (64 processes); the command was stopped',
    );
    expect(attempt.check?.outputTail).not.toContain('all 2000 started');
  }, 60_000);
});
