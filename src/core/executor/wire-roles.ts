/**
 * The coordinator's role definitions as they cross the queue: each role as the text of a role file
 * (front matter and system prompt), rebuilt on the worker by the same parser and validator that reads
 * `agents/<role>.md` ({@link parseRoleFile}), so a person's `agents/implementer.md` is what workers run.
 *
 * Invariants (a job is untrusted input on a worker): a job names exactly the three roles, each within a
 * size bound, or it is refused whole; a role keeps its own access level whatever its text says (the role
 * is the key, never read from the text); who plays a role on this machine — `command:` or `bin:`, programs
 * of the worker's own — is the worker's definition's: a job that names another is refused, never run.
 * `agent:` may name one of the known presets (the worker installs the agent CLIs its fleet's roles use).
 */
import { stringify } from 'yaml';
import { InputErrors } from '../../domain/errors.js';
import { ROLES, type Role } from '../../domain/types.js';
import { parseRoleFile, type RoleDefinition } from '../roles/definitions.js';

/** Per role: a prompt longer than this is not a role file but a payload. */
export const MAX_ROLE_TEXT = 64 * 1024;

export type WireRoles = Record<Role, string>;

/** One definition as a role file's text; `parseRoleFile` of it gives the definition back. */
export function roleFileText(def: RoleDefinition): string {
  const front: Record<string, unknown> = { name: def.name, max_turns: def.maxTurns, max_tokens: def.maxTokens };
  if (def.description !== '') front.description = def.description;
  if (def.model !== undefined) front.model = def.model;
  if (def.tools !== undefined) front.tools = def.tools;
  if (def.command !== undefined) front.command = def.command;
  if (def.agent !== undefined) front.agent = def.agent;
  if (def.bin !== undefined) front.bin = def.bin;
  return `---\n${stringify(front)}---\n${def.prompt}\n`;
}

export function rolesToWire(roles: Record<Role, RoleDefinition>): WireRoles {
  return Object.fromEntries(ROLES.map((role) => [role, roleFileText(roles[role])])) as WireRoles;
}

/**
 * The job's roles as this worker runs them. `own`: the worker's definitions, whose `command:` and `bin:`
 * are the only ones it runs. Throws an Error naming the job, the role and what is wrong.
 */
export function rolesFromWire(
  jobId: string,
  value: unknown,
  own: Record<Role, RoleDefinition>,
): Record<Role, RoleDefinition> {
  const where = `job ${jobId}: roles`;
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Error(`${where}: expected an object of role files`);
  const extra = Object.keys(value).filter((k) => !(ROLES as readonly string[]).includes(k));
  if (extra.length > 0)
    throw new Error(`${where}: unknown role ${JSON.stringify(extra[0])} (roles: ${ROLES.join(', ')})`);
  const roles: Partial<Record<Role, RoleDefinition>> = {};
  for (const role of ROLES) {
    const text = (value as Record<string, unknown>)[role];
    if (typeof text !== 'string') throw new Error(`${where}: ${role} is missing or not text`);
    if (text.length > MAX_ROLE_TEXT)
      throw new Error(`${where}: ${role} is ${text.length} characters, more than ${MAX_ROLE_TEXT}`);
    let def: RoleDefinition;
    try {
      def = parseRoleFile(text, `${role} role of job ${jobId}`, role);
    } catch (error) {
      if (!(error instanceof InputErrors)) throw error;
      throw new Error(
        `${where}: ${role}: ${error.errors.map((e) => (e.line === null ? e.problem : `line ${e.line}: ${e.problem}`)).join('; ')}`,
      );
    }
    for (const key of ['command', 'bin'] as const) {
      if (def[key] !== own[role][key]) {
        throw new Error(
          `${where}: ${role} names ${key}: ${JSON.stringify(def[key] ?? null)}, and this worker's ${role} has ${JSON.stringify(own[role][key] ?? null)}: a worker runs only its own programs`,
        );
      }
    }
    roles[role] = { ...def, source: `${role} role of job ${jobId}` };
  }
  return roles as Record<Role, RoleDefinition>;
}
