/**
 * Best-of-N (`parallel:`): the reviewer's choice among the verified candidates of one round. Each candidate's
 * diff and check output are agent-written, so they are quoted as untrusted data ({@link quoteUntrusted}); the
 * reviewer answers with a candidate's number. The answer is only a preference: {@link parseChoice} accepts a
 * number of a candidate it was shown, anything else is null and the rule decides ({@link chooseByRule}).
 */
import type { CheckResult, TaskSpec } from '../../domain/types.js';
import { END_OF_QUOTES, quoteUntrusted } from '../text/untrusted.js';
import { attemptMarker, taskMarker } from './marker.js';

/** What the reviewer is shown of one verified candidate. */
export interface ShownCandidate {
  k: number;
  files: number;
  lines: number;
  patch: string;
  check: CheckResult | null;
}

/** What the rule compares: the fewest files changed, then the smallest diff, then the lowest k. */
export interface Measured {
  k: number;
  files: number;
  lines: number;
}

const CHOICE_CHARS = 60_000;
const CHECK_CHARS = 4_000;

export const CHOICE_SCHEMA: Record<string, unknown> = {
  type: 'object',
  properties: {
    choice: { type: 'integer' },
    reason: { type: 'string' },
  },
  required: ['choice'],
  additionalProperties: false,
};

export function choosePrompt(spec: TaskSpec, attempt: number, plan: string, shown: readonly ShownCandidate[]): string {
  const share = Math.max(1_000, Math.floor(CHOICE_CHARS / Math.max(1, shown.length)));
  const facts = shown.map(
    (c) =>
      `- candidate ${c.k}: ${c.files} file(s), ${c.lines} line(s) changed; check ${c.check === null ? 'none configured' : `\`${c.check.command}\` exited ${c.check.exitCode ?? 'without a code'}`}`,
  );
  const blocks = shown.flatMap((c) => [
    '',
    `## Candidate ${c.k}`,
    '',
    quoteUntrusted(`the diff of candidate ${c.k} against the base branch, written by an implementer`, c.patch, share),
    ...(c.check === null
      ? []
      : [
          '',
          quoteUntrusted(
            `the last output of candidate ${c.k}'s check, printed by code under test`,
            c.check.outputTail,
            CHECK_CHARS,
          ),
        ]),
  ]);
  return [
    taskMarker(spec.id),
    attemptMarker(attempt),
    '',
    `# Task ${spec.id}: choose one of ${shown.length} verified candidates`,
    '',
    `Implementers each made a change from the same plan; every candidate below passed its checks and its review. Choose the one that does the task best: correct, smallest and clearest. The candidates are numbered ${shown.map((c) => c.k).join(', ')}.`,
    '',
    ...facts,
    '',
    quoteUntrusted('the plan every candidate followed, written by the explorer', plan.trim(), 8_000),
    ...blocks,
    '',
    END_OF_QUOTES,
    '',
    `Answer only with JSON naming one of the candidates ${shown.map((c) => c.k).join(', ')}, for example {"choice": ${shown[0]?.k ?? 1}, "reason": "why"}.`,
  ].join('\n');
}

/** The candidate the reviewer named, when it is one of `offered`; null for anything else. */
export function parseChoice(text: string, offered: readonly number[]): number | null {
  const json = /\{[\s\S]*\}/.exec(text)?.[0];
  if (json === undefined) return null;
  try {
    const value = (JSON.parse(json) as { choice?: unknown }).choice;
    return typeof value === 'number' && offered.includes(value) ? value : null;
  } catch {
    // Not JSON: the answer is malformed and the rule decides, as documented.
    return null;
  }
}

/** The rule: the fewest files changed, then the smallest diff (lines added plus deleted), then the lowest k. */
export function chooseByRule(candidates: readonly Measured[]): number | null {
  const sorted = [...candidates].sort((a, b) => a.files - b.files || a.lines - b.lines || a.k - b.k);
  return sorted[0]?.k ?? null;
}
