import { expect } from 'vitest';
import { findRepo } from '../../src/commands/repo.js';
import { openSession } from '../../src/commands/session.js';
import type { AgentEvent, AgentRequest, AgentResult, ModelClient } from '../../src/ports/model.js';
import type { ProcessRunner } from '../../src/ports/process.js';
import { FakeModel, type FakeScript } from './fake-model.js';
import type { Harness } from './fleet-harness.js';
import { git } from './git-repo.js';

/** What a scripted implementer does: the fake model's file edits, then shell commands as the shell tool runs them. */
export type AttackScript = (call: Parameters<FakeScript>[0]) => ReturnType<FakeScript> & { shell?: string[] };

/**
 * A scripted model whose implementer also runs shell commands, through the session's real ProcessRunner
 * and in the same sandbox as the real shell tool (the worktree writable, nothing else). A failing command
 * fails the test: an attack that did not happen proves nothing.
 */
class ShellModel implements ModelClient {
  readonly #fake: FakeModel;
  readonly #script: AttackScript;
  readonly #runner: ProcessRunner;
  readonly #sandboxed: boolean;

  constructor(script: AttackScript, runner: ProcessRunner, sandboxed: boolean) {
    this.#fake = new FakeModel(script);
    this.#script = script;
    this.#runner = runner;
    this.#sandboxed = sandboxed;
  }

  get calls() {
    return this.#fake.calls;
  }

  async runAgent(request: AgentRequest, onEvent: (event: AgentEvent) => void): Promise<AgentResult> {
    const result = await this.#fake.runAgent(request, onEvent);
    const call = this.#fake.calls.at(-1)!;
    const commands = this.#script({ role: request.role, task: call.task, attempt: call.attempt, request }).shell ?? [];
    for (const command of commands) {
      const run = await this.#runner.run(command, {
        cwd: request.workdir,
        env: request.env,
        timeoutMs: 30_000,
        sandbox: this.#sandboxed ? { writable: [request.workdir] } : null,
      });
      if (run.exitCode !== 0) throw new Error(`attack command failed (${run.exitCode}): ${command}\n${run.output}`);
    }
    return result;
  }
}

/** Runs the backlog to idle with an attacking implementer and closes the session. */
export async function runAttack(root: string, script: AttackScript): Promise<Harness> {
  const repo = await findRepo(root);
  let model: ShellModel | undefined;
  const session = await openSession(repo, {
    overrides: {},
    autoMerge: false,
    watch: false,
    env: { ...process.env, ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' },
    services: (s) => {
      model = new ShellModel(script, s.runner, s.sandboxed);
      return { ...s, model, cliModel: model };
    },
  });
  session.fleet.start();
  await session.fleet.whenIdle();
  await session.close();
  return { fleet: session.fleet, model: model as unknown as FakeModel, session };
}

/** A script whose implementer takes `turn` and whose other roles do nothing. */
export const implementer =
  (turn: ReturnType<AttackScript>): AttackScript =>
  ({ role }) =>
    role === 'implementer' ? turn : {};

/** Runs the attack on T-1: the task failed on `rule` (the guard's), and loop/T-1 holds nothing the attack wrote. Returns the reason. */
export async function expectRefused(root: string, script: AttackScript, rule: RegExp): Promise<string> {
  const { fleet } = await runAttack(root, script);
  const task = fleet.task('T-1')!;
  const attempt = task.attempts.at(-1)!;
  expect({ status: task.status, outcome: attempt.outcome, reason: attempt.reason }).toMatchObject({
    status: 'failed',
    outcome: 'guard-failed',
    reason: expect.stringMatching(rule),
  });
  expect(await git(root, 'diff', '--stat', 'main', 'loop/T-1')).toBe('');
  return attempt.reason!;
}
