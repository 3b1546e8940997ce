import type { Role } from '../domain/types.js';
import type { Script, ScriptRequest, ScriptTurn } from './script-types.js';

/** Small builders for scripts of the fake Messages API. */

export type RoleScripts = Partial<Record<Role, Script>> & {
  /** for a request without a role marker, or a role without a script */
  other?: Script;
};

/** Dispatches on the role marker of the system prompt. */
export function byRole(scripts: RoleScripts): Script {
  return (req: ScriptRequest) => {
    const script = (req.role !== null ? scripts[req.role] : undefined) ?? scripts.other;
    if (script === undefined) return { text: `no script for role ${req.role ?? '(none)'}` };
    return script(req);
  };
}

/**
 * Answers requests with `turns` in order, whatever they ask; after the last, `after` (default: the last turn
 * again). Useful for fault sequences: a 429, then a normal reply for the retry.
 */
export function sequence(turns: ScriptTurn[], after?: Script): Script {
  let next = 0;
  return (req) => {
    const turn = turns[next];
    if (turn !== undefined) {
      next += 1;
      return turn;
    }
    if (after !== undefined) return after(req);
    const last = turns.at(-1);
    if (last === undefined) throw new Error('sequence() needs at least one turn or an `after` script');
    return last;
  };
}

/** Answers by the number of assistant turns so far: `turns[0]` first, then `turns[1]`... the last repeats. */
export function byTurn(turns: ScriptTurn[]): Script {
  if (turns.length === 0) throw new Error('byTurn() needs at least one turn');
  return (req) => turns[Math.min(req.assistantTurns, turns.length - 1)]!;
}
