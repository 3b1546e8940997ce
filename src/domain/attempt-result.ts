/** How one attempt ended, as plain data: what the pipeline returns, and what a worker sends back. */
import type { AttemptOutcome, BaselineResult, CheckResult, ProofResult, Verdict } from './types.js';

export interface AttemptResult {
  outcome: AttemptOutcome;
  reason: string | null;
  /** what the next attempt is told */
  evidence: string | null;
  plan: string | null;
  setup: CheckResult | null;
  check: CheckResult | null;
  guard: string[];
  verdict: Verdict | null;
  commit: string | null;
  diffStat: string | null;
  /** every check run, in order; `check` is the decisive one */
  checks: CheckResult[];
  baseline: BaselineResult[];
  proof: ProofResult | null;
  /** the attempt stopped after the explorer: its plan awaits a person's approval (outcome `interrupted`) */
  awaitingApproval?: true;
  /** the plan overlaps this task's: the attempt stopped before implementing */
  waitingFor?: { id: string; files: string[] };
}
