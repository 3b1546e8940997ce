/**
 * Best-of-N (`parallel:`): one attempt round of a task runs the explorer once, then N implementers from its
 * plan at once, each a whole attempt of its own — its own worktree, branch, port and sandbox, the same setup,
 * guard, checks and review — and one verified candidate becomes the task's branch.
 *
 * Invariants: a candidate's commands and agents are confined to its own worktree (the sandbox's one writable
 * folder is the worktree its input names), so no candidate changes another; only a candidate whose own
 * attempt ended `verified` can be chosen, whatever the reviewer answers; every candidate that is not chosen
 * and committed something is kept under {@link candidateRef} before its worktree and branch go, on every
 * path out of the round (a stop, an error), so nothing an implementer made is lost.
 */
import { basename, dirname, join } from 'node:path';
import { GateError, RateLimitError, ResourceLimitError, StopError } from '../../domain/errors.js';
import { FleetHeldError } from '../budget/rate-limits.js';
import type { GitPort } from '../../ports/git.js';
import { candidateRef } from '../../domain/layout.js';
import type { CandidateRecord } from '../../domain/types.js';
import type { AttemptInput, AttemptResult } from '../attempt/attempt-io.js';
import type { PortPool } from '../attempt/port-pool.js';
import type { AttemptExecutor } from '../executor/attempt-executor.js';
import { CheckedCommits } from '../verify/checked-commits.js';
import { chooseByRule, choosePrompt, parseChoice, type ShownCandidate } from '../roles/choose-prompt.js';
import { failureEvidence } from '../roles/prompts.js';

export interface CandidateRoundServices {
  executor: AttemptExecutor;
  git: GitPort;
  ports: PortPool;
}

/** What a round is given besides the task's own attempt input. */
export interface RoundPlan {
  /** how many candidates run (≥ 2) */
  count: number;
  /** the first candidate's number: one more than the task's candidates so far */
  firstK: number;
  /** the reviewer chooses among several verified candidates; false: the rule does */
  review: boolean;
  /** the round ends in an error or a stop: the candidates as they were kept, for the attempt's record */
  cutShort?(candidates: CandidateRecord[]): void;
  /** the sandbox's and the host's environment for a candidate's worktree, branch and port */
  envFor(
    worktree: string,
    branch: string,
    port: number,
  ): { env: Record<string, string>; hostEnv: Record<string, string> };
}

export interface RoundResult {
  /** the chosen candidate's result; the plan's own when the round stopped before implementing; a failure when none verified */
  result: AttemptResult;
  candidates: CandidateRecord[];
  chosen: { k: number; by: 'review' | 'rule' } | null;
}

interface Ran {
  k: number;
  worktree: string;
  branch: string;
  result: AttemptResult | null;
  error: unknown;
  files: number | null;
  lines: number | null;
  patch: string;
}

/** The worktree and branch of candidate `k` of the task whose own are `worktree` and `branch`. */
export function candidatePlace(worktree: string, branch: string, k: number): { worktree: string; branch: string } {
  return { worktree: join(dirname(worktree), `${basename(worktree)}--c${k}`), branch: `${branch}--c${k}` };
}

export class CandidateRound {
  readonly #s: CandidateRoundServices;

  constructor(services: CandidateRoundServices) {
    this.#s = services;
  }

  /** Whether the executor can run a round (the in-process pipeline can; a worker pool cannot). */
  get supported(): boolean {
    return this.#s.executor.choose !== undefined;
  }

  async run(input: AttemptInput, round: RoundPlan): Promise<RoundResult> {
    const planned = await this.#s.executor.run({ ...input, planOnly: true });
    // Setup failed, the plan waits for approval, for an overlapping task, or split the task: as one attempt.
    if (planned.outcome !== 'interrupted' || planned.awaitingApproval === true || planned.waitingFor !== undefined)
      return { result: planned, candidates: [], chosen: null };
    const plan = planned.plan ?? '';
    const ks = Array.from({ length: round.count }, (_, i) => round.firstK + i);
    const ran: Ran[] = ks.map((k) => ({
      k,
      ...candidatePlace(input.worktree, input.branch, k),
      result: null,
      error: null,
      files: null,
      lines: null,
      patch: '',
    }));
    let chosen: Ran | null = null;
    /** each candidate's ref once it is shelved (null: chosen, or nothing of its own to keep) */
    const refs = new Map<number, string | null>();
    const shelveAll = async () => {
      for (const c of ran) if (!refs.has(c.k)) refs.set(c.k, await this.#shelve(input, c, c === chosen));
    };
    const records = () => ran.map((c) => record(c, refs.get(c.k) ?? null));
    try {
      // A candidate a crash left behind is kept before the same number runs again.
      for (const c of ran) await this.#shelve(input, c);
      await this.#startFrom(input, ran);
      input.observer.notice(`${round.count} candidates implement the plan: ${ks.join(', ')}`, 'info');
      await Promise.all(ran.map((c) => this.#candidate(input, plan, round, c)));
      // The fleet stopped or a gate tripped: the round is interrupted as a whole, its candidates kept.
      if (input.signal.aborted) throw input.signal.reason;
      const fatal = ran.find((c) => c.error !== null && isStop(c.error));
      if (fatal !== undefined) throw fatal.error;
      const verified = ran.filter((c) => c.result?.outcome === 'verified' && c.result.commit !== null);
      const pick = await this.#choose(input, plan, round, verified);
      if (pick !== null) {
        chosen = pick.chosen;
        await this.#land(input, chosen);
      }
      await shelveAll();
      if (pick === null) return { result: failedRound(planned, ran, records()), candidates: records(), chosen: null };
      const result = { ...pick.chosen.result!, plan, setup: planned.setup, baseline: planned.baseline };
      return { result, candidates: records(), chosen: { k: pick.chosen.k, by: pick.by } };
    } catch (error) {
      // Every path out keeps what the candidates made; a round cut short still tells which refs it left.
      await shelveAll();
      round.cutShort?.(records());
      throw error;
    }
  }

  /** A task branch that already holds commits (an earlier attempt's) is where each candidate starts. */
  async #startFrom(input: AttemptInput, ran: readonly Ran[]): Promise<void> {
    const [tip = null, baseTip = null] = await this.#s.git.resolveCommits([`refs/heads/${input.branch}`, input.base]);
    if (tip === null || tip === baseTip) return;
    for (const c of ran) await this.#s.git.updateRef(`refs/heads/${c.branch}`, tip);
  }

  /** One candidate: a whole attempt from the plan in its own worktree; what it changed is measured after. */
  async #candidate(input: AttemptInput, plan: string, round: RoundPlan, c: Ran): Promise<void> {
    const key = basename(c.worktree);
    const port = this.#s.ports.acquire(key);
    const say = (message: string) => `candidate ${c.k}: ${message}`;
    try {
      c.result = await this.#s.executor.run({
        ...input,
        worktree: c.worktree,
        branch: c.branch,
        ...round.envFor(c.worktree, c.branch, port),
        approvedPlan: plan,
        stopAfterPlan: false,
        planOnly: false,
        verifyOnly: false,
        observer: {
          ...input.observer,
          // The plan is the round's, claimed once by the round's own explorer.
          planned: () => null,
          notice: (message, level) => input.observer.notice(say(message), level),
        },
      });
      input.observer.notice(say(c.result.reason ?? c.result.outcome), 'info');
    } catch (error) {
      c.error = error;
    } finally {
      this.#s.ports.release(key);
    }
    const summary = c.result?.commit == null ? null : await this.#s.git.diffSummary(c.worktree, input.base);
    if (summary !== null && summary.numstat.length > 0) {
      c.files = summary.numstat.length;
      c.lines = summary.numstat.reduce((sum, n) => sum + (n.added ?? 0) + (n.deleted ?? 0), 0);
      c.patch = summary.patch;
    }
  }

  /** The reviewer's choice among several verified candidates, or the rule's; null when none verified. */
  async #choose(
    input: AttemptInput,
    plan: string,
    round: RoundPlan,
    verified: Ran[],
  ): Promise<{ chosen: Ran; by: 'review' | 'rule' } | null> {
    const measured = verified.map((c) => ({ k: c.k, files: c.files ?? 0, lines: c.lines ?? 0 }));
    const ruled = chooseByRule(measured);
    if (ruled === null) return null;
    const byRule = { chosen: verified.find((c) => c.k === ruled)!, by: 'rule' as const };
    const executor = this.#s.executor;
    if (verified.length < 2 || !round.review || executor.choose === undefined) return byRule;
    const shown: ShownCandidate[] = verified.map((c) => ({
      k: c.k,
      files: c.files ?? 0,
      lines: c.lines ?? 0,
      patch: c.patch,
      check: c.result?.check ?? null,
    }));
    const answer = await executor.choose(input, choosePrompt(input.spec, input.attempt, plan, shown));
    const named = parseChoice(
      answer,
      verified.map((c) => c.k),
    );
    if (named === null) {
      input.observer.notice(
        `the reviewer's choice did not name a verified candidate (${verified.map((c) => c.k).join(', ')}); the rule chose ${ruled}`,
        'warn',
      );
      return byRule;
    }
    return { chosen: verified.find((c) => c.k === named)!, by: 'review' };
  }

  /** The chosen commit becomes the task branch's tip, checked here like any verified attempt's. */
  async #land(input: AttemptInput, chosen: Ran): Promise<void> {
    const commit = chosen.result!.commit!;
    await this.#s.git.resetHard(input.worktree, commit);
    await new CheckedCommits(this.#s.git).record(input.spec.id, commit);
  }

  /**
   * A candidate's branch is kept under its ref (unless `chosen`: its commit is the task's branch now), then
   * its worktree and branch are removed. A branch that holds nothing beyond base needs no ref.
   */
  async #shelve(input: AttemptInput, c: Ran, chosen = false): Promise<string | null> {
    const { git } = this.#s;
    const [tip = null, baseTip = null, taskTip = null] = await git.resolveCommits([
      `refs/heads/${c.branch}`,
      input.base,
      `refs/heads/${input.branch}`,
    ]);
    // Only a commit of the candidate's own is kept: not base, not the task branch it started from.
    const ref = !chosen && tip !== null && tip !== baseTip && tip !== taskTip ? candidateRef(input.spec.id, c.k) : null;
    if (ref !== null) await git.updateRef(ref, tip!);
    if ((await git.listWorktrees()).some((w) => w.path === c.worktree)) await git.removeWorktree(c.worktree, true);
    if (tip !== null) await git.deleteBranch(c.branch, true);
    return ref;
  }
}

/** A stop, a gate or a limit ends the round for every candidate; any other error is that candidate's alone. */
function isStop(error: unknown): boolean {
  return (
    error instanceof GateError ||
    error instanceof StopError ||
    error instanceof RateLimitError ||
    error instanceof FleetHeldError ||
    ResourceLimitError.of(error) !== null
  );
}

function record(c: Ran, ref: string | null): CandidateRecord {
  const r = c.result;
  const message = c.error instanceof Error ? c.error.message : c.error === null ? null : String(c.error);
  return {
    k: c.k,
    outcome: r?.outcome ?? (c.error === null || isStop(c.error) ? 'interrupted' : 'error'),
    reason: r?.reason ?? message,
    commit: r?.commit ?? null,
    files: c.files,
    lines: c.lines,
    ref,
  };
}

/** No candidate verified: the round fails like an attempt, its evidence every candidate's. */
function failedRound(planned: AttemptResult, ran: readonly Ran[], records: readonly CandidateRecord[]): AttemptResult {
  const reasons = records.map((r) => `candidate ${r.k}: ${r.reason ?? r.outcome}`).join('; ');
  const evidence = failureEvidence(
    `none of ${ran.length} candidates verified`,
    'Each candidate implemented the same plan; what each one ran into follows.',
    ran.map((c) => ({
      label: `candidate ${c.k}'s evidence (it may quote agent-written text)`,
      text: c.result?.evidence ?? (c.error instanceof Error ? c.error.message : String(c.error ?? '')),
    })),
  );
  const outcomes = new Set(records.map((r) => r.outcome));
  return {
    ...planned,
    outcome: outcomes.size === 1 ? records[0]!.outcome : 'check-failed',
    reason: `no candidate verified: ${reasons}`,
    evidence,
    commit: null,
    diffStat: null,
  };
}
