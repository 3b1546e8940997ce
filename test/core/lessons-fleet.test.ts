import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { backlog, runFleet } from '../helpers/fleet-harness.js';
import { makeRepo, read } from '../helpers/git-repo.js';
import type { FakeScript } from '../helpers/fake-model.js';

/** Lessons through a whole fleet: real git, the lessons file on disk, the scripted model. */

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups) await c();
  cleanups = [];
});

async function repo(front: string, items: string): Promise<string> {
  const r = await makeRepo({ 'BACKLOG.md': backlog(`check: test -f done.txt\nconcurrency: 1\ngates:\n  attempts: 1\n${front}`, items), 'README.md': 'hi\n' });
  cleanups.push(r.cleanup);
  return r.root;
}

const explorerPrompt = (calls: Array<{ role: string; task: string; prompt: string }>, task: string): string =>
  calls.find((c) => c.role === 'explorer' && c.task === task)!.prompt;

describe('lessons across tasks', () => {
  it("a vetoed task's LESSON reaches the explorer of the next task, and is kept in .loop-worktrees/lessons.md", { timeout: 60_000 }, async () => {
    const root = await repo('', '- [ ] T-1 First\n- [ ] T-2 Second');
    const systems: string[] = [];
    const script: FakeScript = ({ role, task, request }) => {
      if (role === 'explorer') systems.push(request.system);
      if (role === 'implementer') return { edits: { 'done.txt': task }, text: task === 'T-1' ? 'Done.\nLESSON: run the tests with --runInBand\n' : 'Done.' };
      if (role === 'verifier' && task === 'T-1') return { text: '{"pass":false,"reasons":["touches the wrong file"]}' };
      return {};
    };
    const { fleet, model } = await runFleet(root, script);
    expect(fleet.task('T-1')!.status).toBe('failed');
    expect(fleet.task('T-1')!.attempts[0]!.outcome).toBe('vetoed');
    expect(explorerPrompt(model.calls, 'T-1')).not.toContain('--runInBand');
    expect(explorerPrompt(model.calls, 'T-2')).toContain('## Lessons');
    expect(explorerPrompt(model.calls, 'T-2')).toContain('- run the tests with --runInBand');
    expect(await read(root, '.loop-worktrees/lessons.md')).toMatch(/^- \d{4}-\d{2}-\d{2} T-1: run the tests with --runInBand$/m);
    // The lessons are in the user turn: the explorer's system prompt, the cached prefix, is the same for both.
    expect(systems).toHaveLength(2);
    expect(systems[1]).toBe(systems[0]);
    expect(systems[1]).not.toContain('--runInBand');
  });

  it('a veto reason given in two tasks becomes a lesson for the third', { timeout: 60_000 }, async () => {
    const root = await repo('', '- [ ] T-1 One\n- [ ] T-2 Two\n- [ ] T-3 Three');
    const script: FakeScript = ({ role, task }) => {
      if (role === 'implementer') return { edits: { 'done.txt': task } };
      if (role === 'verifier' && task !== 'T-3') return { text: '{"pass":false,"reasons":["never edit the changelog by hand"]}' };
      return {};
    };
    const { fleet, model } = await runFleet(root, script);
    expect(fleet.task('T-2')!.status).toBe('failed');
    expect(explorerPrompt(model.calls, 'T-2')).not.toContain('changelog');
    expect(explorerPrompt(model.calls, 'T-3')).toContain('The reviewer insists: never edit the changelog by hand');
  });

  it('lessons: off reads and writes nothing', { timeout: 60_000 }, async () => {
    const root = await repo('lessons: off', '- [ ] T-1 First\n- [ ] T-2 Second');
    const script: FakeScript = ({ role, task }) => (role === 'implementer' ? { edits: { 'done.txt': task }, text: 'LESSON: run the tests with --runInBand' } : {});
    const { model } = await runFleet(root, script);
    expect(explorerPrompt(model.calls, 'T-2')).not.toContain('--runInBand');
    expect(existsSync(join(root, '.loop-worktrees', 'lessons.md'))).toBe(false);
  });
});
