import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { backlog, runFleet } from '../helpers/fleet-harness.js';
import { makeRepo } from '../helpers/git-repo.js';
import type { FakeScript } from '../helpers/fake-model.js';
import { readState } from '../helpers/state-file.js';
import { CLI } from '../helpers/paths.js';

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups) await c();
  cleanups = [];
});

const script: FakeScript = ({ role }) =>
  role === 'explorer'
    ? { text: 'THE PLAN: create done.txt holding the word done' }
    : role === 'implementer'
      ? { edits: { 'done.txt': 'done\n' } }
      : {};

function cli(cwd: string, args: string[]) {
  // No model credentials: approving calls no model.
  return execa(process.execPath, [CLI, ...args], {
    cwd,
    reject: false,
    env: { NO_COLOR: '1', ANTHROPIC_API_KEY: undefined, ANTHROPIC_BASE_URL: undefined },
    extendEnv: true,
    timeout: 60_000,
  });
}

describe('loopfleet approve (the built CLI)', () => {
  it('approves a plan that waits; the next run implements it without exploring again', {
    timeout: 60_000,
  }, async () => {
    const { root, cleanup } = await makeRepo({
      'BACKLOG.md': backlog(
        'check: test -f done.txt\nautonomy: plan',
        '- [ ] T-1 Write done.txt\n- [ ] T-2 Reviewed as usual\n  autonomy: review',
      ),
      'README.md': 'hi\n',
    });
    cleanups.push(cleanup);
    const first = await runFleet(root, script);
    expect(first.fleet.task('T-1')!.status).toBe('awaiting-approval');
    expect(first.model.calls.filter((c) => c.task === 'T-1').map((c) => c.role)).toEqual(['explorer']);
    expect(first.fleet.task('T-2')!.status).toBe('verified');

    const refused = await cli(root, ['approve', 'T-2']);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toMatch(/T-2 is verified: only awaiting-approval tasks can be approved/);

    const approve = await cli(root, ['approve', 'T-1']);
    expect(approve.stderr).toBe('');
    expect(approve.exitCode).toBe(0);
    expect(approve.stdout).toMatch(/T-1 queued — plan approved/);
    expect((await readState(root)).tasks['T-1'].approvedPlan).toBe('THE PLAN: create done.txt holding the word done');

    const second = await runFleet(root, script);
    expect(second.fleet.task('T-1')!.status).toBe('verified');
    const calls = second.model.calls.filter((c) => c.task === 'T-1');
    expect(calls.map((c) => c.role)).toEqual(['implementer', 'verifier']);
    expect(calls[0]!.prompt).toContain('THE PLAN: create done.txt holding the word done');

    const unknown = await cli(root, ['approve']);
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toMatch(/loopfleet approve takes one task id/);
  });
});
