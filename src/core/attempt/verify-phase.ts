/**
 * The verify phase's checks for one attempt: the checks on the commit the task started from (baselines),
 * the checks on the attempt's commit judged against them, and `prove:` (the kept tests must fail with the
 * code set back to base). All of them run in the sandbox when there is one; no agent runs here.
 */
import type { BaselineResult, CheckResult, CheckSpec } from '../../domain/types.js';
import type { AttemptInput, AttemptResult, PipelineServices } from './attempt-io.js';
import { failAttempt, type AttemptCommands } from './commands.js';
import { baseFailure, baselinesFor } from '../verify/baseline.js';
import { watchTracked } from '../verify/check-integrity.js';
import { judgeCheck, ownChecks } from '../verify/checks.js';
import { inCheckTree } from '../verify/hidden-tests.js';
import { proveAttempt } from '../verify/prove.js';

export class AttemptChecks {
  readonly #s: PipelineServices;
  readonly #run: AttemptCommands;

  constructor(services: PipelineServices, commands: AttemptCommands) {
    this.#s = services;
    this.#run = commands;
  }

  /**
   * The checks in order, in the sandbox, each judged against its result on base when there is one; the
   * first that fails ends the run. `changed`: what they did to the tracked files, null when nothing.
   */
  async run(
    input: AttemptInput,
    checks: readonly CheckSpec[],
    baselines: readonly BaselineResult[],
  ): Promise<{ results: CheckResult[]; changed: string | null }> {
    if (checks.length === 0) return { results: [], changed: null };
    // An eval task's checks run on its commit with the hidden tests over it, in a scratch checkout.
    const tree = {
      scratch: this.#s.scratch,
      prepare: (dir: string) => this.#run.prepareScratch(input, dir),
      commit: () => this.#s.git.revParse(`refs/heads/${input.branch}`),
    };
    const { value: results, changed } = await inCheckTree(input.spec, input.worktree, tree, (dir) =>
      this.#checksIn({ ...input, worktree: dir }, checks, baselines),
    );
    return { results, changed };
  }

  #checksIn(input: AttemptInput, checks: readonly CheckSpec[], baselines: readonly BaselineResult[]) {
    return watchTracked(this.#s.tracked, input.worktree, async (pinned) => {
      const results: CheckResult[] = [];
      for (const c of checks) {
        const run = await this.#run.command(
          input,
          'verify',
          c.run,
          input.config.checkTimeoutMs,
          this.#s.sandboxed,
          true,
          { pinned },
        );
        const base = baselines.find((b) => b.command === c.run) ?? null;
        results.push(judgeCheck(run, c, base, !ownChecks(input.spec)));
        if (run.judged === 'failed') break;
      }
      return results;
    });
  }

  /** The checks on the commit the task started from: cached, or run now in a scratch checkout of it. */
  async baseline(input: AttemptInput, checks: CheckSpec[], commit: string): Promise<BaselineResult[]> {
    const results = await baselinesFor(checks, commit, `base-${input.spec.id}`, {
      store: this.#s.baselines,
      scratch: this.#s.scratch,
      prepare: (dir) => this.#run.prepareScratch(input, dir),
      // Quiet: base's output is kept in the result, not streamed as the task's own.
      run: (dir, command) =>
        this.#run.command(
          { ...input, worktree: dir, observer: { ...input.observer, output: () => undefined } },
          'setup',
          command,
          input.config.checkTimeoutMs,
          this.#s.sandboxed,
          true,
        ),
    });
    // A task's own check failing on base is the task's starting point; the shared check failing there is news.
    if (ownChecks(input.spec)) return results;
    for (const b of results) {
      const failing = baseFailure(b);
      if (failing !== null)
        input.observer.notice(
          `${failing}${b.counts === null ? '' : '; judged by not making it worse'}`,
          b.counts === null ? 'info' : 'warn',
        );
    }
    return results;
  }

  /**
   * `prove:` — the tests the attempt kept must fail with its code set back to base: a check that passes
   * without the change proves nothing. Returns the failed result, or null when proved.
   */
  async prove(
    input: AttemptInput,
    result: AttemptResult,
    checks: CheckSpec[],
    startCommit: string,
    paths: string[],
  ): Promise<AttemptResult | null> {
    const { spec, config } = input;
    // The branch's head: an attempt that committed nothing new is proved on what the branch holds.
    const head = result.commit ?? (await this.#s.git.revParse(input.branch));
    if (head === null) throw new Error(`branch ${input.branch} does not resolve to a commit`);
    result.proof = await proveAttempt(
      {
        commit: head,
        base: startCommit,
        paths,
        checks,
        testGlobs: config.tests ?? [],
        scratchName: `prove-${spec.id}`,
      },
      {
        scratch: this.#s.scratch,
        prepare: (dir) => this.#run.prepareScratch(input, dir),
        run: async (dir, c) => {
          const { value, changed } = await watchTracked(this.#s.tracked, dir, (pinned) =>
            this.#run.command(
              { ...input, worktree: dir },
              'verify',
              c.run,
              config.checkTimeoutMs,
              this.#s.sandboxed,
              true,
              { pinned },
            ),
          );
          return { check: value, changed };
        },
      },
    );
    input.observer.output('verify', `${result.proof.message}\n`);
    if (result.proof.status !== 'not-proved' && result.proof.status !== 'no-tests') return null;
    const detail = `${result.proof.message}. Tests kept: ${result.proof.tests.join(', ') || 'none'}; set back to base: ${result.proof.restored.join(', ')}.`;
    return failAttempt(result, 'check-failed', result.proof.message, detail, [
      {
        label: 'the last output of the checks with the code set back to base, printed by code under test',
        text: result.proof.outputTail,
      },
    ]);
  }
}
