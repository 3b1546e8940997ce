import { attemptMarker, roleMarker, taskMarker } from './role-marker.js';
import type { CheckResult, Role, TaskSpec } from '../domain/types.js';
import { FILES_INSTRUCTION } from './plan-files.js';

/**
 * The text each role is given. The system prompt is the role definition plus a role marker and never
 * varies between tasks or attempts, so it is the cached prefix; everything task-specific is in the user turn.
 */

const DIFF_LIMIT = 60_000;

export function systemPrompt(role: Role, body: string): string {
  return `${body.trim()}\n\n${roleMarker(role)}\n`;
}

function header(spec: TaskSpec, attempt: number): string {
  const lines = [taskMarker(spec.id), attemptMarker(attempt), '', `# Task ${spec.id}: ${spec.title}`];
  if (spec.description !== '') lines.push('', spec.description);
  if (spec.files.length > 0) lines.push('', `Files this task is about: ${spec.files.join(', ')}`);
  return lines.join('\n');
}

function checkLine(check: string | null): string {
  return check === null
    ? 'There is no check command: the reviewer decides.'
    : `The task is done when \`${check}\` exits 0 in the repository root. loopfleet runs it after you finish.`;
}

function evidenceBlock(evidence: string | null): string {
  return evidence === null
    ? ''
    : `\n\n## The previous attempt failed\n\nFix what this evidence shows; do not repeat the same approach blindly.\n\n${evidence}`;
}

/** `lessons`: the lessons section (core/lessons renderLessons), '' for none; in the user turn, so the system prompt stays cached. */
export function explorerPrompt(spec: TaskSpec, attempt: number, check: string | null, evidence: string | null, lessons = ''): string {
  const lessonsBlock = lessons.trim() === '' ? '' : `\n\n## Lessons\n\n${lessons.trim()}`;
  return `${header(spec, attempt)}\n\n${checkLine(check)}${lessonsBlock}${evidenceBlock(evidence)}\n\nStudy the repository and write the plan.\n\n${FILES_INSTRUCTION}`;
}

export function implementerPrompt(
  spec: TaskSpec,
  attempt: number,
  check: string | null,
  plan: string,
  evidence: string | null,
): string {
  return `${header(spec, attempt)}\n\n${checkLine(check)}\n\n## Plan\n\n${plan.trim()}${evidenceBlock(evidence)}\n\nCarry out the plan now.`;
}

export function reviewerPrompt(spec: TaskSpec, attempt: number, plan: string, diff: string, check: CheckResult | null): string {
  const shownDiff = diff.length > DIFF_LIMIT ? `${diff.slice(0, DIFF_LIMIT)}\n[diff cut at ${DIFF_LIMIT} characters]` : diff;
  const checkPart =
    check === null
      ? 'No check command is configured for this task.'
      : `\`${check.command}\` exited ${check.exitCode} in ${Math.round(check.durationMs / 1000)}s. Last output:\n\n\`\`\`\n${check.outputTail}\n\`\`\``;
  return `${header(spec, attempt)}\n\n## Plan the implementer followed\n\n${plan.trim()}\n\n## Diff against the base branch\n\n\`\`\`diff\n${shownDiff}\n\`\`\`\n\n## Check\n\n${checkPart}\n\nReview the change. Answer only with the JSON verdict, for example {"pass": false, "reasons": ["what is wrong, and where"]}; "pass": true when the change does the task.`;
}

export const VERDICT_SCHEMA: Record<string, unknown> = {
  type: 'object',
  properties: {
    pass: { type: 'boolean' },
    reasons: { type: 'array', items: { type: 'string' } },
  },
  required: ['pass', 'reasons'],
  additionalProperties: false,
};

/** Evidence for the next attempt: what failed, in the words of the check and the reviewer. */
export function failureEvidence(kind: string, detail: string): string {
  return `Outcome: ${kind}\n\n${detail.trim()}`;
}
