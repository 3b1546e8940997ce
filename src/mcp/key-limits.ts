/**
 * The task keys an MCP client may not write through add_task: those that would loosen what the person
 * decided for their repository. A client reads text agents wrote (see the tool descriptions) and may be
 * steered by it; what it adds must stay under the person's rules:
 *
 * - `autonomy: auto` would let the task land without a person — the one thing merge and discard are gated on
 *   ({@link landingRefusal}); `plan` and `review` only ask for more of the person, and are accepted;
 * - `setup:` runs outside the sandbox, with the person's environment, on their own code;
 * - `files:` lifts the protected paths (CI workflows, lockfiles, agent instructions) for the task;
 * - `land:` decides where the branch goes (`pr` pushes it to the remote);
 * - `review: false` and `prove: false` turn a verification step off.
 *
 * Every other key (`check`, `attempts`, `after`, `priority`, …) is accepted: the task's own check still runs in
 * the sandbox, and the guard and the reviewer still judge it.
 */

type Limit = (value: string) => string | null;

const PERSON = 'write it in BACKLOG.md yourself if you want it';

const LIMITS: Readonly<Record<string, Limit>> = {
  autonomy: (v) =>
    v === 'auto'
      ? `a client may not set \`autonomy: auto\`: a task lands without a person only where a person wrote so (\`plan\` and \`review\` are accepted); ${PERSON}`
      : null,
  setup: () =>
    `a client may not set \`setup:\`: it runs outside the sandbox, with your environment, on your own code; ${PERSON}`,
  files: () => `a client may not set \`files:\`: it lifts the protected paths for the task; ${PERSON}`,
  land: () => `a client may not set \`land:\`: it decides where the task's branch goes; ${PERSON}`,
  review: (v) => (v === 'false' ? `a client may not turn the reviewer off; ${PERSON}` : null),
  prove: (v) => (v === 'false' ? `a client may not turn proof off; ${PERSON}` : null),
};

/** The refusals, one line each (`keys.setup: …`), for the keys a client may not write; empty when none. */
export function keyRefusals(keys: Readonly<Record<string, string>>): string[] {
  const out: string[] = [];
  for (const [key, value] of Object.entries(keys)) {
    const words = LIMITS[key]?.(value.trim().toLowerCase()) ?? null;
    if (words !== null) out.push(`keys.${key}: ${words}`);
  }
  return out;
}
