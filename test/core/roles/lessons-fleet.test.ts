import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { backlog, runFleet } from '../../helpers/fleet-harness.js';
import { makeRepo, read } from '../../helpers/git-repo.js';
import type { FakeScript } from '../../helpers/fake-model.js';

/** Lessons through a whole fleet: real git, the lessons file on disk, the scripted model. */

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups) await c();
  cleanups = [];
});

async function repo(front: string, items: string): Promise<string> {
  const r = await makeRepo({
    'BACKLOG.md': backlog(`check: test -f done.txt\nconcurrency: 1\ngates:\n  attempts: 1\n${front}`, items),
    'README.md': 'hi\n',
  });
  cleanups.push(r.cleanup);
  return r.root;
}

const explorerPrompt = (calls: Array<{ role: string; task: string; prompt: string }>, task: string): string =>
  calls.find((c) => c.role === 'explorer' && c.task === task)!.prompt;

describe('lessons across tasks', () => {
  it("a verified task's LESSON reaches the explorer of the next task, a vetoed one's is not kept at all", {
    timeout: 60_000,
  }, async () => {
    const root = await repo('', '- [ ] T-1 First\n- [ ] T-2 Second\n- [ ] T-3 Third');
    const systems: string[] = [];
    const script: FakeScript = ({ role, task, request }) => {
      if (role === 'explorer') systems.push(request.system);
      if (role === 'implementer')
        return {
          edits: { 'done.txt': task },
          text: `Done.\nLESSON: ${{ 'T-1': 'run the tests with --runInBand', 'T-2': 'skip the slow tests' }[task] ?? 'use pnpm'}\n`,
        };
      if (role === 'verifier' && task === 'T-2') return { text: '{"pass":false,"reasons":["touches the wrong file"]}' };
      return {};
    };
    const { fleet, model } = await runFleet(root, script);
    expect(fleet.task('T-1')!.attempts[0]!.outcome).toBe('verified');
    expect(fleet.task('T-2')!.status).toBe('failed');
    expect(fleet.task('T-2')!.attempts[0]!.outcome).toBe('vetoed');
    expect(explorerPrompt(model.calls, 'T-1')).not.toContain('--runInBand');
    for (const later of ['T-2', 'T-3']) {
      expect(explorerPrompt(model.calls, later)).toContain('## Notes from earlier tasks');
      expect(explorerPrompt(model.calls, later)).toContain('- (T-1, verified) run the tests with --runInBand');
    }
    expect(explorerPrompt(model.calls, 'T-3')).not.toContain('skip the slow tests');
    const file = await read(root, '.loop-worktrees/lessons.md');
    expect(file).toMatch(/^- \d{4}-\d{2}-\d{2} T-1 \(verified\): run the tests with --runInBand$/m);
    expect(file).not.toContain('skip the slow tests');
    expect(file).toMatch(/^- \d{4}-\d{2}-\d{2} T-3 \(verified\): use pnpm$/m);
    // The lessons are in the user turn: the explorer's system prompt, the cached prefix, is the same for all.
    expect(systems).toHaveLength(3);
    expect(new Set(systems).size).toBe(1);
    expect(systems[0]).not.toContain('--runInBand');
  });

  it('a veto reason given in two tasks becomes a lesson for the third', { timeout: 60_000 }, async () => {
    const root = await repo('', '- [ ] T-1 One\n- [ ] T-2 Two\n- [ ] T-3 Three');
    const script: FakeScript = ({ role, task }) => {
      if (role === 'implementer') return { edits: { 'done.txt': task } };
      if (role === 'verifier' && task !== 'T-3')
        return { text: '{"pass":false,"reasons":["never edit the changelog by hand"]}' };
      return {};
    };
    const { fleet, model } = await runFleet(root, script);
    expect(fleet.task('T-2')!.status).toBe('failed');
    expect(explorerPrompt(model.calls, 'T-2')).not.toContain('changelog');
    expect(explorerPrompt(model.calls, 'T-3')).toContain('The reviewer insists: never edit the changelog by hand');
  });

  it('lessons: off reads and writes nothing', { timeout: 60_000 }, async () => {
    const root = await repo('lessons: off', '- [ ] T-1 First\n- [ ] T-2 Second');
    const script: FakeScript = ({ role, task }) =>
      role === 'implementer' ? { edits: { 'done.txt': task }, text: 'LESSON: run the tests with --runInBand' } : {};
    const { model } = await runFleet(root, script);
    expect(explorerPrompt(model.calls, 'T-2')).not.toContain('--runInBand');
    expect(existsSync(join(root, '.loop-worktrees', 'lessons.md'))).toBe(false);
  });
});
