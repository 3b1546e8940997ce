import { describe, expect, it } from 'vitest';
import type { AttemptInput, AttemptObserver } from '../../../src/core/attempt/attempt-io.js';
import { Pipeline } from '../../../src/core/attempt/pipeline.js';
import { ROLE_DEFAULTS, type RoleDefinition } from '../../../src/core/roles/definitions.js';
import { defaultConfig } from '../../../src/core/backlog/parse.js';
import { GateError } from '../../../src/domain/errors.js';
import { ROLES, type Role, type TaskSpec } from '../../../src/domain/types.js';
import { FakeGit } from '../../helpers/fake-git.js';
import { FakeModel, type FakeScript } from '../../helpers/fake-model.js';
import { FakeRunner } from '../../helpers/fake-runner.js';
import { FakeScratchTrees, FakeTrackedFiles, FakeBaselineStore } from '../../helpers/fake-verification.js';
import { FakeWorkspace } from '../../helpers/fake-workspace.js';
import { fakeLessons } from '../../helpers/fake-lessons.js';

const WORKTREE = '/repo/.loop-worktrees/T-1';
const spec: TaskSpec = { id: 'T-1', title: 'One', line: 5, done: false, description: 'Do it.', after: [], files: [] };
const roles = Object.fromEntries(
  ROLES.map((role) => [
    role,
    { role, name: role, description: role, ...ROLE_DEFAULTS[role], prompt: `You are the ${role}.`, source: '(test)' },
  ]),
) as Record<Role, RoleDefinition>;

function setup(script: FakeScript, exitCode = 0) {
  const git = new FakeGit('/repo');
  const model = new FakeModel(script, async (workdir, path, content) => {
    git.files(workdir).set(path, content);
  });
  const runner = new FakeRunner(() => ({ exitCode, output: exitCode === 0 ? 'ok\n' : 'FAIL one test\n' }));
  const pipeline = new Pipeline({
    git,
    runner,
    model,
    cliModel: model,
    workspace: new FakeWorkspace(git),
    roles,
    sandboxed: true,
    shellAllowed: false,
    baselines: new FakeBaselineStore(),
    scratch: new FakeScratchTrees(git),
    tracked: new FakeTrackedFiles(git),
    lessons: fakeLessons(),
  });
  const seen: string[] = [];
  const observer: AttemptObserver = {
    phase: (p) => seen.push(`phase:${p}`),
    agentEvent: (role, _model, e) => seen.push(`${role}:${e.type}`),
    output: (p) => seen.push(`output:${p}`),
    notice: (message) => seen.push(`notice:${message}`),
  };
  let calls = 0;
  const input = (over: Partial<AttemptInput> = {}): AttemptInput => ({
    spec,
    config: { ...defaultConfig(), check: 'the-check' },
    base: 'main',
    repoRoot: '/repo',
    worktree: WORKTREE,
    branch: 'loop/T-1',
    attempt: 1,
    verifyOnly: false,
    approvedPlan: null,
    stopAfterPlan: false,
    previousPlan: null,
    env: {},
    hostEnv: {},
    evidence: null,
    signal: new AbortController().signal,
    observer,
    budget: { beforeCall: () => void calls++, remainingMs: () => 60_000 },
    ...over,
  });
  return { git, model, runner, pipeline, seen, input, calls: () => calls };
}

const implementerWrites: FakeScript = ({ role }) => (role === 'implementer' ? { edits: { 'done.txt': 'done\n' } } : {});

describe('the pipeline', () => {
  it('reports its phases and the agents’ events to the observer, in order, and asks the budget before each call', async () => {
    const p = setup(implementerWrites);
    const result = await p.pipeline.run(p.input());
    expect(result).toMatchObject({ outcome: 'verified', reason: null, plan: 'explorer done', guard: [] });
    expect(result.commit).not.toBeNull();
    expect(result.diffStat).toContain('done.txt');
    expect(p.seen).toEqual([
      'phase:setup',
      'phase:explore',
      'explorer:usage',
      'explorer:text',
      'phase:implement',
      'implementer:usage',
      'implementer:tool',
      'implementer:text',
      'phase:verify',
      'output:verify',
      'verifier:usage',
      'verifier:text',
    ]);
    expect(p.calls()).toBe(3);
    expect(p.git.show('loop/T-1', 'done.txt')).toBe('done\n');
  });

  it('verifies a rebased branch as it is: no explorer, no implementer, the earlier plan for the reviewer', async () => {
    const p = setup(implementerWrites);
    await p.pipeline.run(p.input());
    p.model.calls.length = 0;
    const result = await p.pipeline.run(p.input({ verifyOnly: true, previousPlan: 'the plan', attempt: 2 }));
    expect(result.outcome).toBe('verified');
    expect(result.plan).toBe('the plan');
    expect(p.model.calls.map((c) => c.role)).toEqual(['verifier']);
  });

  it('fails an attempt whose implementer changed nothing', async () => {
    const p = setup(() => ({}));
    const result = await p.pipeline.run(p.input());
    expect(result).toMatchObject({ outcome: 'check-failed', reason: 'the implementer changed nothing' });
    expect(result.evidence).toContain('No file differs from the base branch.');
  });

  it('fails a failing check with its output as evidence, and never asks the reviewer', async () => {
    const p = setup(implementerWrites, 1);
    const result = await p.pipeline.run(p.input());
    expect(result).toMatchObject({ outcome: 'check-failed', reason: 'check `the-check` exited 1' });
    expect(result.evidence).toContain('FAIL one test');
    expect(p.model.calls.map((c) => c.role)).toEqual(['explorer', 'implementer']);
  });

  it('refuses a change to a protected path and takes the commit back out of the branch', async () => {
    const p = setup(({ role }) => (role === 'implementer' ? { edits: { 'BACKLOG.md': 'mine now\n' } } : {}));
    const base = await p.git.revParse('main');
    const result = await p.pipeline.run(p.input());
    expect(result.outcome).toBe('guard-failed');
    expect(result.reason).toMatch(/BACKLOG\.md/);
    expect(await p.git.revParse('loop/T-1')).toBe(base);
  });

  it('stops before a model call when the budget says a gate tripped', async () => {
    const p = setup(implementerWrites);
    const gate = new GateError('tokens', 'task', 'token gate: 2k tokens used, limit 1k');
    await expect(
      p.pipeline.run(
        p.input({
          budget: {
            beforeCall: () => {
              throw gate;
            },
            remainingMs: () => 1,
          },
        }),
      ),
    ).rejects.toBe(gate);
    expect(p.model.calls).toHaveLength(0);
  });
});
