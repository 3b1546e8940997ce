/**
 * Which tasks an MCP client may merge or discard: only those that land without a person anyway. The rule
 * is the backlog's `autonomy:` — the task's own, else the front matter's ({@link autonomyOf}):
 *
 * - `auto`: a verified task lands by itself through the merge queue, so a client may ask for its merge or
 *   its discard;
 * - `review` (the default) and `plan`: a person merges or discards; the client is refused, in words that say
 *   what the person runs or presses instead.
 *
 * Retry lands nothing (the task is queued and verified again), so it is not gated.
 */
import type { Autonomy } from '../domain/types.js';

/** The autonomy that lets a client land a task. */
export const AUTONOMY_WITHOUT_A_PERSON: Autonomy = 'auto';

const VERB: Record<'merge' | 'discard', { does: string; key: string }> = {
  merge: { does: 'merges', key: 'm' },
  discard: { does: 'discards', key: 'd' },
};

/** null when the client may go ahead; else the refusal, naming the person's command and key. */
export function landingRefusal(action: 'merge' | 'discard', id: string, autonomy: Autonomy): string | null {
  if (autonomy === AUTONOMY_WITHOUT_A_PERSON) return null;
  const { does, key } = VERB[action];
  return (
    `refused: autonomy is \`${autonomy}\`, so a person ${does} — run \`loopfleet ${action} ${id}\` or press ${key} in the TUI ` +
    `(a client may ${action} only under \`autonomy: auto\`)`
  );
}
