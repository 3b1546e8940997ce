import type { Verdict } from '../domain/types.js';

/**
 * The reviewer's answer as a verdict. Anything that is not a well-formed verdict is a veto: an unreadable
 * review must never let a change through.
 */
export function parseVerdict(text: string): Verdict {
  const trimmed = text.trim();
  const candidates = [trimmed];
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(trimmed);
  if (fenced?.[1] !== undefined) candidates.push(fenced[1]);
  const braces = /\{[\s\S]*\}/.exec(trimmed);
  if (braces !== null) candidates.push(braces[0]);
  for (const candidate of candidates) {
    try {
      const value = JSON.parse(candidate) as unknown;
      if (typeof value === 'object' && value !== null && typeof (value as Verdict).pass === 'boolean') {
        const reasons = (value as { reasons?: unknown }).reasons;
        return {
          pass: (value as Verdict).pass,
          reasons: Array.isArray(reasons) ? reasons.map(String) : [],
        };
      }
    } catch {
      // not this candidate; the next one may be the JSON
    }
  }
  return { pass: false, reasons: [`the reviewer's answer was not a verdict: ${trimmed.slice(0, 200) || '(empty)'}`] };
}
