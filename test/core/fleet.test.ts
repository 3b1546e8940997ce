import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { backlog, openFleet, reopen, runFleet } from '../helpers/fleet-harness.js';
import { git, makeRepo, read, writeFiles } from '../helpers/git-repo.js';
import { fleetReducer, initFleetState } from '../../src/ui/fleet-reducer.js';

const PASS_CHECK = 'test -f done.txt';
let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups) await c();
  cleanups = [];
});

async function repo(front: string, items: string, files: Record<string, string> = {}) {
  const r = await makeRepo({ 'BACKLOG.md': backlog(front, items), 'README.md': 'hello\n', ...files });
  cleanups.push(r.cleanup);
  return r.root;
}

describe('the fleet on a real repository', () => {
  it('runs a task to verified on its own branch and worktree, leaving the checkout alone', async () => {
    const root = await repo(`check: ${PASS_CHECK}`, '- [ ] T-1 Write done.txt\n  Put the word done in it.');
    const { fleet, model } = await runFleet(root, ({ role }) => (role === 'implementer' ? { edits: { 'done.txt': 'done\n' } } : {}));
    const t = fleet.task('T-1')!;
    expect(t.status).toBe('verified');
    expect(t.branch).toBe('loop/T-1');
    expect(model.calls.map((c) => c.role)).toEqual(['explorer', 'implementer', 'verifier']);
    expect(model.calls[1]!.prompt).toContain('Put the word done in it.');
    expect(await git(root, 'show', 'loop/T-1:done.txt')).toBe('done');
    expect(await git(root, 'status', '--porcelain')).toBe('');
    expect(existsSync(join(root, '.loop-worktrees', 'T-1', 'done.txt'))).toBe(true);
    expect(await readFile(join(root, '.git', 'info', 'exclude'), 'utf8')).toContain('/.loop-worktrees/');
    const state = JSON.parse(await read(root, '.loop-worktrees/state.json'));
    expect(state.tasks['T-1'].status).toBe('verified');
    expect(state.tasks['T-1'].attempts[0].check.exitCode).toBe(0);
    expect(state.tasks['T-1'].attempts[0].verdict).toEqual({ pass: true, reasons: ['looks right'] });
    expect(existsSync(join(root, '.loop-worktrees', 'logs', 'T-1', '1.jsonl'))).toBe(true);
    expect(existsSync(join(root, '.loop-worktrees', 'fleet.lock'))).toBe(false);
  });

  it('fails a task whose check keeps failing at the attempts gate, feeding each failure to the next attempt', async () => {
    const root = await repo('check: sh -c "echo missing-$LOOPFLEET_TASK_ID-$(cat n.txt); exit 3"', '- [ ] T-1 Never done\n  attempts: 3');
    let n = 0;
    const { fleet, model } = await runFleet(root, ({ role }) => (role === 'implementer' ? { edits: { 'n.txt': `try${++n === 2 ? 'b' : n === 3 ? 'c' : 'a'}\n` } } : {}));
    const t = fleet.task('T-1')!;
    expect(t.status).toBe('failed');
    expect(t.gate).toBe('attempts');
    expect(t.attempts.map((a) => a.outcome)).toEqual(['check-failed', 'check-failed', 'check-failed']);
    const secondImplementer = model.calls.filter((c) => c.role === 'implementer')[1]!;
    expect(secondImplementer.prompt).toContain('missing-T-1-trya');
    expect(model.calls.some((c) => c.role === 'verifier')).toBe(false);
  });

  it('stops at the no-progress gate when the same failure repeats', async () => {
    const root = await repo('check: sh -c "echo always the same; exit 1"', '- [ ] T-1 Stuck\n  attempts: 5');
    const { fleet } = await runFleet(root, ({ role }) => (role === 'implementer' ? { edits: { 'x.txt': 'x\n' } } : {}));
    expect(fleet.task('T-1')!.gate).toBe('no-progress');
    expect(fleet.task('T-1')!.attempts).toHaveLength(2);
  });

  it('lets the reviewer veto a passing check, and never pass a failing one', async () => {
    const root = await repo(`check: ${PASS_CHECK}`, '- [ ] T-1 Vetoed\n  attempts: 1');
    const { fleet } = await runFleet(root, ({ role }) =>
      role === 'implementer' ? { edits: { 'done.txt': 'x' } } : role === 'verifier' ? { text: '{"pass":false,"reasons":["deletes a test"]}' } : {},
    );
    const t = fleet.task('T-1')!;
    expect(t.status).toBe('failed');
    expect(t.attempts[0]!.outcome).toBe('vetoed');
    expect(t.attempts[0]!.reason).toContain('deletes a test');

    const root2 = await repo('check: "false"', '- [ ] T-2 Reviewer says pass\n  attempts: 1');
    const second = await runFleet(root2, ({ role }) => (role === 'implementer' ? { edits: { 'a.txt': 'a' } } : { text: '{"pass":true,"reasons":[]}' }));
    expect(second.fleet.task('T-2')!.status).toBe('failed');
    expect(second.model.calls.some((c) => c.role === 'verifier')).toBe(false);
  });

  it('aborts a call mid-stream when the token gate trips and counts what was streamed', async () => {
    const root = await repo(`check: ${PASS_CHECK}\ngates:\n  tokens: 1000`, '- [ ] T-1 Expensive');
    const { fleet } = await runFleet(root, ({ role }) =>
      role === 'implementer' ? { usage: { input: 4000, output: 0, cacheWrite: 0, cacheRead: 0 }, chunks: 8, delayMs: 5, edits: { 'done.txt': 'x' } } : {},
    );
    const t = fleet.task('T-1')!;
    expect(t.status).toBe('failed');
    expect(t.gate).toBe('tokens');
    // explorer 120 + implementer chunks until the total passed 1000: aborted well before its 4000
    const total = t.usage.input + t.usage.output;
    expect(total).toBeGreaterThanOrEqual(1000);
    expect(total).toBeLessThan(2000);
    expect(await git(root, 'branch', '--list', 'loop/T-1')).toContain('loop/T-1');
  });

  it('stops the whole run at a fleet gate and keeps unfinished tasks queued', async () => {
    const root = await repo(`check: ${PASS_CHECK}\nconcurrency: 1\ngates:\n  fleet_tokens: 300`, '- [ ] T-1 One\n- [ ] T-2 Two\n- [ ] T-3 Three');
    const { fleet } = await runFleet(root, ({ role }) => (role === 'implementer' ? { edits: { 'done.txt': 'x' } } : {}));
    expect(fleet.stoppedBy).toBe('fleet_tokens');
    const statuses = fleet.tasks().map((t) => t.status);
    expect(statuses).not.toContain('running');
    expect(statuses.filter((s) => s === 'queued').length).toBeGreaterThanOrEqual(2);
  });
});

describe('merge, conflict, discard', () => {
  it('merges a verified branch with a merge commit, ticks the item and removes worktree and branch', async () => {
    const root = await repo(`check: ${PASS_CHECK}`, '- [ ] T-1 Write done.txt\n- [ ] Item without id');
    await runFleet(root, ({ role, task }) => (role === 'implementer' ? { edits: { 'done.txt': 'done\n', [`${task}.txt`]: task } } : {}));
    const backlogText = await read(root, 'BACKLOG.md');
    expect(backlogText).toContain('- [ ] T-2 Item without id');
    const h = await reopen(root);
    await h.fleet.merge('T-1');
    await h.session.close();
    expect(h.fleet.task('T-1')!.status).toBe('merged');
    expect(await git(root, 'log', '-1', '--format=%P%n%s', 'main')).toMatch(/^\w+ \w+\nMerge loop\/T-1: T-1 Write done.txt/);
    expect(await read(root, 'done.txt')).toBe('done\n');
    expect(await read(root, 'BACKLOG.md')).toContain('- [x] T-1 Write done.txt');
    expect(existsSync(join(root, '.loop-worktrees', 'T-1'))).toBe(false);
    expect(await git(root, 'branch', '--list', 'loop/T-1')).toBe('');
  });

  it('refuses a merge into a dirty checkout and touches nothing', async () => {
    const root = await repo(`check: ${PASS_CHECK}`, '- [ ] T-1 Write done.txt');
    await runFleet(root, ({ role }) => (role === 'implementer' ? { edits: { 'done.txt': 'done\n' } } : {}));
    await writeFiles(root, { 'README.md': 'my unsaved work\n' });
    const head = await git(root, 'rev-parse', 'main');
    const h = await reopen(root);
    await expect(h.fleet.merge('T-1')).rejects.toThrow(/refused/);
    await h.session.close();
    expect(await read(root, 'README.md')).toBe('my unsaved work\n');
    expect(await git(root, 'rev-parse', 'main')).toBe(head);
    expect(h.fleet.task('T-1')!.status).toBe('verified');
  });

  it('marks the second of two conflicting tasks conflict, leaving base exactly as it was', async () => {
    const root = await repo(`check: ${PASS_CHECK}`, '- [ ] T-1 One\n- [ ] T-2 Two', { 'shared.txt': 'original\n' });
    await runFleet(root, ({ role, task }) => (role === 'implementer' ? { edits: { 'done.txt': 'x', 'shared.txt': `changed by ${task}\n` } } : {}));
    const h = await reopen(root);
    await h.fleet.merge('T-1');
    const head = await git(root, 'rev-parse', 'main');
    const status = await git(root, 'status', '--porcelain');
    await h.fleet.merge('T-2');
    expect(h.fleet.task('T-2')!.status).toBe('conflict');
    expect(h.fleet.task('T-2')!.reason).toMatch(/conflicts in .*shared.txt/);
    expect(await git(root, 'rev-parse', 'main')).toBe(head);
    expect(await git(root, 'status', '--porcelain')).toBe(status);
    expect(await read(root, 'shared.txt')).toBe('changed by T-1\n');
    // retry rebases; the rebase conflicts too, so the task stays conflict and its branch is intact
    await h.fleet.retry('T-2');
    expect(h.fleet.task('T-2')!.status).toBe('conflict');
    expect(await git(root, 'show', 'loop/T-2:shared.txt')).toBe('changed by T-2');
    await h.session.close();
  });

  it('discards a task keeping a recoverable ref', async () => {
    const root = await repo(`check: ${PASS_CHECK}`, '- [ ] T-1 Write done.txt');
    await runFleet(root, ({ role }) => (role === 'implementer' ? { edits: { 'done.txt': 'done\n' } } : {}));
    const tip = await git(root, 'rev-parse', 'loop/T-1');
    const h = await reopen(root);
    await h.fleet.discard('T-1');
    await h.session.close();
    expect(h.fleet.task('T-1')!.status).toBe('discarded');
    expect(await git(root, 'rev-parse', 'refs/loopfleet/discarded/T-1')).toBe(tip);
    expect(await git(root, 'branch', '--list', 'loop/T-1')).toBe('');
    expect(existsSync(join(root, '.loop-worktrees', 'T-1'))).toBe(false);
    expect(await read(root, 'BACKLOG.md')).toContain('- [ ] T-1');
  });

  it('runs a task after its dependency is merged (auto-merge)', async () => {
    const root = await repo(`check: ${PASS_CHECK}`, '- [ ] T-1 First\n- [ ] T-2 Second\n  after: T-1');
    const { fleet, model } = await runFleet(root, ({ role, task }) => (role === 'implementer' ? { edits: { 'done.txt': 'x', [`${task}.txt`]: task } } : {}), { autoMerge: true });
    expect(fleet.task('T-1')!.status).toBe('merged');
    expect(fleet.task('T-2')!.status).toBe('merged');
    const order = model.calls.map((c) => c.task);
    expect(order.lastIndexOf('T-1')).toBeLessThan(order.indexOf('T-2'));
    expect(await read(root, 'T-1.txt')).toBe('T-1');
    expect(await read(root, 'T-2.txt')).toBe('T-2');
  });

  it('leaves a dependent queued while its dependency is only verified', async () => {
    const root = await repo(`check: ${PASS_CHECK}`, '- [ ] T-1 First\n- [ ] T-2 Second\n  after: T-1');
    const { fleet } = await runFleet(root, ({ role }) => (role === 'implementer' ? { edits: { 'done.txt': 'x' } } : {}));
    expect(fleet.task('T-1')!.status).toBe('verified');
    expect(fleet.task('T-2')!.status).toBe('queued');
  });
});

describe('resume and locking', () => {
  it('refuses a second fleet on the same repository, naming the pid', async () => {
    const root = await repo(`check: ${PASS_CHECK}`, '- [ ] T-1 One');
    const first = await openFleet(root, () => ({}));
    await expect(openFleet(root, () => ({}))).rejects.toThrow(new RegExp(`pid ${process.pid}|another loopfleet`));
    await first.session.close();
  });
});

describe('fleet state', () => {
  it('goes idle when the work runs out and running again when new work comes, and never starts work before start()', async () => {
    const root = await repo(`check: ${PASS_CHECK}`, '- [ ] T-1 One');
    const h = await openFleet(root, ({ role }) => (role === 'implementer' ? { edits: { 'done.txt': 'x' } } : {}));
    const states: string[] = [];
    h.fleet.events.on('fleet', (s) => states.push(s.state));
    h.fleet.applyBacklog({ ...h.session.backlog }); // an edit before start() must not start anything
    await new Promise((r) => setTimeout(r, 100));
    expect(h.model.calls).toHaveLength(0);
    h.fleet.start();
    await h.fleet.whenIdle();
    expect(h.fleet.summary().state).toBe('idle');
    expect(states.at(-1)).toBe('idle');
    expect(states).toContain('running');
    await h.session.close();
    expect(h.fleet.summary().state).toBe('finished');
  });
});

describe('retrying a conflict', () => {
  it('rebases the branch onto the new base and verifies it again without calling the implementer', async () => {
    const root = await repo(`check: ${PASS_CHECK}`, '- [ ] T-1 One\n- [ ] T-2 Two', { 'shared.txt': 'original\n' });
    await runFleet(root, ({ role, task }) => (role === 'implementer' ? { edits: { 'done.txt': 'x', 'shared.txt': `changed by ${task}\n`, [`${task}.txt`]: task } } : {}));
    const h = await openFleet(root, () => ({ text: '{"pass":true,"reasons":["still right after the rebase"]}' }));
    await h.fleet.merge('T-1');
    await h.fleet.merge('T-2');
    expect(h.fleet.task('T-2')!.status).toBe('conflict');
    // The person settles it on base: T-1's line goes back, so T-2's change applies again.
    await writeFiles(root, { 'shared.txt': 'original\n' });
    await git(root, 'commit', '-qam', 'back to the original line');
    h.fleet.start();
    await h.fleet.retry('T-2');
    await h.fleet.whenIdle();
    const t = h.fleet.task('T-2')!;
    expect(t.status).toBe('verified');
    expect(t.attempts.at(-1)!.verdict!.reasons).toEqual(['still right after the rebase']);
    expect(h.model.calls.map((c) => c.role)).toEqual(['verifier']);
    await h.fleet.merge('T-2');
    await h.session.close();
    expect(await read(root, 'shared.txt')).toBe('changed by T-2\n');
    expect(await read(root, 'T-1.txt')).toBe('T-1');
  });
});

describe('event order', () => {
  it('tells subscribers each step in order: phases, agent output, usage, then the final status', async () => {
    const root = await repo(`check: ${PASS_CHECK}`, '- [ ] T-1 One');
    const h = await openFleet(root, ({ role }) => (role === 'implementer' ? { edits: { 'done.txt': 'x' }, text: 'wrote it' } : {}));
    const seen: string[] = [];
    h.fleet.events.on('task', ({ task, previousStatus }) => {
      const step = task.status === 'running' ? `phase:${task.phase}` : `status:${previousStatus}->${task.status}`;
      if (seen.at(-1) !== step) seen.push(step);
    });
    h.fleet.events.on('agent-text', (e) => seen.push(`text:${e.role}`));
    h.fleet.events.on('tool-call', (e) => seen.push(`tool:${e.name}`));
    h.fleet.events.on('phase-output', (e) => {
      if (seen.at(-1) !== `output:${e.phase}`) seen.push(`output:${e.phase}`);
    });
    h.fleet.start();
    await h.fleet.whenIdle();
    await h.session.close();
    expect(seen).toEqual([
      'phase:setup',
      'phase:explore',
      'text:explorer',
      'phase:implement',
      'tool:write',
      'text:implementer',
      'phase:verify',
      'text:verifier',
      'status:running->verified',
    ]);
  });
});

describe('settings edited while the fleet runs', () => {
  it('applies a new concurrency at once', async () => {
    const root = await repo(`check: ${PASS_CHECK}\nconcurrency: 1`, '- [ ] T-1 One\n- [ ] T-2 Two\n- [ ] T-3 Three\n- [ ] T-4 Four');
    const h = await openFleet(root, ({ role }) => (role === 'implementer' ? { edits: { 'done.txt': 'x' }, delayMs: 150, chunks: 2 } : {}));
    let running = 0;
    let most = 0;
    h.fleet.events.on('task', ({ task, previousStatus }) => {
      if (previousStatus !== 'running' && task.status === 'running') running++;
      if (previousStatus === 'running' && task.status !== 'running') running--;
      most = Math.max(most, running);
    });
    h.fleet.start();
    await new Promise((r) => setTimeout(r, 50));
    expect(most).toBe(1);
    const backlogNow = h.session.backlog;
    h.fleet.applyBacklog({ ...backlogNow, config: { ...backlogNow.config, concurrency: 3 } });
    await h.fleet.whenIdle();
    await h.session.close();
    expect(most).toBeGreaterThanOrEqual(2);
    expect(h.fleet.tasks().every((t) => t.status === 'verified')).toBe(true);
  });
});

describe('a task ticked [x] in BACKLOG.md while the fleet is open', () => {
  it('is merged through a task event, so the TUI row shows merged', async () => {
    const root = await repo(`check: ${PASS_CHECK}`, '- [ ] T-1 One\n- [ ] T-2 Two');
    const h = await openFleet(root, () => ({}));
    let ui = initFleetState(h.fleet, 0);
    const seen: string[] = [];
    h.fleet.events.on('task', (event) => {
      seen.push(`${event.task.id}:${event.previousStatus}->${event.task.status}`);
      ui = fleetReducer(ui, { type: 'task', event, at: 0 });
    });
    const current = h.session.backlog;
    h.fleet.applyBacklog({ ...current, tasks: current.tasks.map((t) => (t.id === 'T-1' ? { ...t, done: true } : t)) });
    await h.session.close();
    expect(seen).toEqual(['T-1:queued->merged']);
    expect(ui.tasks.get('T-1')!.task.status).toBe('merged');
    expect(ui.tasks.get('T-2')!.task.status).toBe('queued');
    expect(h.fleet.task('T-1')!.status).toBe('merged');
  });
});
