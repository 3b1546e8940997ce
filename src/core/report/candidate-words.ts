/**
 * A best-of-N round in words, the same in the morning report and the detail view:
 * `3 candidates: 1 verified, 1 vetoed, 1 failed check; chose 3 by review`.
 */
import type { AttemptOutcome, AttemptRecord, CandidateRecord } from '../../domain/types.js';

const OUTCOME: Partial<Record<AttemptOutcome, string>> = {
  verified: 'verified',
  vetoed: 'vetoed',
  'check-failed': 'failed check',
  'guard-failed': 'refused by the guard',
  'setup-failed': 'failed setup',
  error: 'stopped with an error',
};

/** The round's summary line; null for an attempt that ran no candidates. */
export function candidateWords(a: Pick<AttemptRecord, 'candidates' | 'chosen'>): string | null {
  const candidates = a.candidates ?? [];
  if (candidates.length === 0) return null;
  const counts = new Map<string, number>();
  for (const c of candidates) {
    const word = OUTCOME[c.outcome] ?? c.outcome;
    counts.set(word, (counts.get(word) ?? 0) + 1);
  }
  const parts = [...counts].map(([word, n]) => `${n} ${word}`).join(', ');
  const chosen = a.chosen == null ? 'none chosen' : `chose ${a.chosen.k} by ${a.chosen.by}`;
  return `${candidates.length} candidates: ${parts}; ${chosen}`;
}

/** One candidate, one line: its number, how it ended, and where it is kept. */
export function candidateLine(c: CandidateRecord, chosenK: number | null): string {
  const kept = c.k === chosenK ? 'chosen: the task branch' : c.ref === null ? 'nothing committed' : c.ref;
  const reason = c.reason === null || c.reason === c.outcome ? '' : ` — ${c.reason.replace(/\s+/g, ' ')}`;
  return `candidate ${c.k}: ${OUTCOME[c.outcome] ?? c.outcome}${reason} (${kept})`;
}
