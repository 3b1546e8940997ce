import type { PrStatusJson } from '../../domain/types.js';

/**
 * A pull request in a few words, the same in the TUI row, `loopfleet status` and the morning report:
 * `PR #12 open ✓ci`, `PR #12 draft ✗ci`, `PR #12 open changes requested`, `PR #12 merged`.
 */
export function prWords(pr: Pick<PrStatusJson, 'number' | 'state' | 'draft' | 'ci' | 'review'>): string {
  const state = pr.state === 'open' && pr.draft ? 'draft' : pr.state;
  if (pr.state !== 'open') return `PR #${pr.number} ${state}`;
  const ci = pr.ci === 'passing' ? ' ✓ci' : pr.ci === 'failing' ? ' ✗ci' : pr.ci === 'pending' ? ' …ci' : '';
  const review = pr.review === 'changes-requested' ? ' changes requested' : pr.review === 'approved' ? ' approved' : '';
  return `PR #${pr.number} ${state}${ci}${review}`;
}
