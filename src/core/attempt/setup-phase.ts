/**
 * The setup phase of one attempt: the task's worktree made (or found from an earlier attempt) and, in a new
 * one, `setup:` run where {@link runSetup} says — sandboxed when its code may be an agent's.
 */
import type { AttemptInput, AttemptResult, PipelineServices } from './attempt-io.js';
import { failAttempt, type AttemptCommands } from './commands.js';
import type { SetupTrust } from './setup-trust.js';
import { landedOn, notVouched, rebuiltFrom, runSetup, type SetupWorktree } from './setup-step.js';
import { formatDuration } from '../text/format-units.js';

export type PreparedWorktree = SetupWorktree & {
  fresh: boolean;
  copied: string[];
  /**
   * The commit a branch made here for this attempt starts from (base's tip when it was made): the branch's
   * fork from base, known without asking git again. Null for a branch that existed already.
   */
  start: string | null;
};

export class AttemptWorktree {
  readonly #s: PipelineServices;
  readonly #run: AttemptCommands;
  readonly #trust: SetupTrust;

  constructor(services: PipelineServices, commands: AttemptCommands, trust: SetupTrust) {
    this.#s = services;
    this.#run = commands;
    this.#trust = trust;
  }

  /**
   * A new worktree gets its ignored files and dependencies; an existing one (a later attempt, a resume) is
   * used as it is, and only the list of copied files is worked out again so they stay out of commits.
   */
  async ensure(input: AttemptInput): Promise<PreparedWorktree> {
    if (await this.#s.workspace.exists(input.worktree)) {
      return {
        fresh: false,
        start: null,
        copied: await this.#s.workspace.included(input.repoRoot),
        depsCloned: false,
        untrusted: rebuiltFrom(input.branch, true),
      };
    }
    const { git } = this.#s;
    // A branch left by an earlier attempt (the worktree deleted, a retry) is rebuilt as it is: whatever it
    // holds may be an agent's. A new branch starts on base, trusted unless an agent's work landed there.
    // Both read at once; a new branch is made from the commit read here, so its start is known exactly.
    const [tip = null, baseTip = null] = await git.resolveCommits([`refs/heads/${input.branch}`, input.base]);
    const head = tip ?? baseTip;
    if (head === null) throw new Error(`base ${input.base} does not resolve to a commit`);
    const agentCommits = tip !== null && tip !== baseTip;
    await git.addWorktree(input.worktree, input.branch, tip === null ? head : input.base);
    const landed = tip === null ? await this.#trust.landedIn(head) : null;
    const untrusted =
      tip !== null
        ? rebuiltFrom(input.branch, agentCommits)
        : landed !== null
          ? landedOn(input.base, landed)
          : input.hostSetupVouched === false
            ? notVouched(input.base)
            : null;
    const prepared = await this.#s.workspace.prepare(input.repoRoot, input.worktree);
    if (prepared.deps.method !== 'none') {
      input.observer.output(
        'setup',
        `dependencies cloned into the worktree (${prepared.deps.method}, ${formatDuration(prepared.deps.ms)})\n`,
      );
    }
    return {
      fresh: true,
      start: tip === null ? head : null,
      copied: prepared.copied,
      depsCloned: prepared.deps.method !== 'none',
      untrusted,
    };
  }

  /** `setup:` in a new worktree, where {@link runSetup} says; returns the failed result, or null. */
  async setup(input: AttemptInput, result: AttemptResult, worktree: SetupWorktree): Promise<AttemptResult | null> {
    const { config } = input;
    const outcome = await runSetup(
      input.spec,
      config,
      worktree,
      this.#s.sandboxed,
      (text) => input.observer.output('setup', text),
      (command, place) =>
        place.sandbox
          ? this.#run.command(input, 'setup', command, config.setupTimeoutMs, true, false, { network: place.network })
          : this.#run.command({ ...input, env: input.hostEnv }, 'setup', command, config.setupTimeoutMs, false),
    );
    result.setup = outcome.result;
    if (outcome.kind !== 'failed') return null;
    return failAttempt(result, 'setup-failed', outcome.reason, '', [
      { label: `the last output of setup \`${outcome.result.command}\``, text: outcome.result.outputTail },
    ]);
  }
}
