import type { AttemptRecord } from '../../domain/types.js';

/** A fresh attempt record: running, nothing measured yet. */
export function newAttempt(n: number, startedAt: string): AttemptRecord {
  return {
    n,
    startedAt,
    endedAt: null,
    plan: null,
    usageByRole: {},
    costByRole: {},
    costUsd: 0,
    setup: null,
    check: null,
    guard: [],
    verdict: null,
    outcome: 'running',
    reason: null,
    commit: null,
    diffStat: null,
    evidence: null,
    fingerprint: null,
  };
}
