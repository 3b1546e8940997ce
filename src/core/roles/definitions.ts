/**
 * Role definitions: agents/<role>.md in the Claude Code subagent format (YAML front matter, Markdown body
 * that is the system prompt). A file in the repository's agents/ folder replaces the packaged one whole.
 *
 * Front matter keys: name, description, model, tools (a comma-separated string or a list), max_turns,
 * max_tokens, command. `maxTurns` / `maxTokens` are accepted as spellings of the last two, `model: inherit`
 * means the backlog's model. Other keys Claude Code knows (color, permissionMode...) are ignored so that a
 * Claude Code subagent file works unchanged; an unknown key that looks like a misspelt known one is an error.
 */
import { resolve } from 'node:path';
import { isMap, isScalar, isSeq, type Node } from 'yaml';
import { closest } from '../backlog/closest.js';
import { readFrontMatter } from '../backlog/front-matter.js';
import { InputError, InputErrors } from '../../domain/errors.js';
import { ROLES, type Role } from '../../domain/types.js';
import type { TextFiles } from '../../ports/files.js';
import type { AgentPresetName } from '../../ports/model.js';
import { parseSize } from '../text/parse-units.js';

export interface RoleDefinition {
  role: Role;
  name: string;
  description: string;
  /** undefined → the backlog's model */
  model?: string;
  /** undefined → the role's full tool set for its access level */
  tools?: string[];
  maxTurns: number;
  maxTokens: number;
  /** an external command-line agent that plays the role instead of the API */
  command?: string;
  /** a known CLI agent that plays the role (`agent:`), run with its own login and flags */
  agent?: AgentPresetName;
  /** the preset's executable when it is not on PATH (`bin:`) */
  bin?: string;
  /** the system prompt: the Markdown body, trimmed */
  prompt: string;
  /** absolute path of the file the definition came from */
  source: string;
}

export const ROLE_DEFAULTS: Readonly<Record<Role, { maxTurns: number; maxTokens: number }>> = Object.freeze({
  explorer: { maxTurns: 20, maxTokens: 8192 },
  implementer: { maxTurns: 40, maxTokens: 8192 },
  verifier: { maxTurns: 12, maxTokens: 8192 },
});

/** The front-matter keys a role file may set. */
export const ROLE_KEYS = [
  'name',
  'description',
  'model',
  'tools',
  'max_turns',
  'max_tokens',
  'command',
  'agent',
  'bin',
] as const;
export const AGENT_PRESETS: readonly AgentPresetName[] = ['claude-code', 'codex', 'gemini', 'opencode'];
const ALIASES: Readonly<Record<string, (typeof ROLE_KEYS)[number]>> = {
  maxTurns: 'max_turns',
  maxTokens: 'max_tokens',
};
const CLAUDE_CODE_KEYS = new Set([
  'color',
  'permissionMode',
  'disallowedTools',
  'skills',
  'hooks',
  'mcpServers',
  'memory',
]);

function scalarText(node: Node | null): string | null | undefined {
  if (node === null || (isScalar(node) && node.value === null)) return null;
  if (!isScalar(node)) return undefined;
  const t = typeof node.value === 'string' ? node.value.trim() : String(node.source ?? node.value);
  return t === '' ? null : t;
}

/** Parses one role file's text. Throws InputErrors listing every problem. */
export function parseRoleFile(text: string, source: string, role: Role): RoleDefinition {
  const errors: InputError[] = [];
  const fm = readFrontMatter(text, source, errors);
  const def: RoleDefinition = { role, name: role, description: '', ...ROLE_DEFAULTS[role], prompt: '', source };
  const contents = fm.doc?.contents ?? null;
  const err = (node: Node | null | undefined, problem: string): void => {
    errors.push(new InputError(source, fm.lineOf(node), problem));
  };

  if (contents !== null && !(isScalar(contents) && contents.value === null)) {
    if (!isMap(contents)) err(contents, 'front matter must be a YAML mapping of key: value lines');
    else {
      for (const pair of contents.items) {
        const keyNode = pair.key as Node;
        const raw = isScalar(keyNode) ? String(keyNode.value) : '?';
        const key = ALIASES[raw] ?? raw;
        const value = (pair.value ?? null) as Node | null;
        if (!(ROLE_KEYS as readonly string[]).includes(key)) {
          const near = CLAUDE_CODE_KEYS.has(raw) ? null : closest(raw, ROLE_KEYS);
          if (near) err(keyNode, `unknown key '${raw}' (did you mean '${near}'?)`);
          continue;
        }
        if (key === 'tools') {
          const parts = isSeq(value) ? (value.items as Node[]).map((n) => scalarText(n)) : [scalarText(value)];
          if (parts.some((t) => t === undefined)) {
            err(keyNode, 'tools must be a comma-separated list of tool names or a YAML list');
            continue;
          }
          def.tools = parts
            .flatMap((t) => (t ?? '').split(','))
            .map((t) => t.trim())
            .filter((t) => t !== '');
          continue;
        }
        const t = scalarText(value);
        if (t === undefined) {
          err(keyNode, `${raw} must be a single value, not a ${isSeq(value) ? 'list' : 'mapping'}`);
          continue;
        }
        if (key === 'max_turns' || key === 'max_tokens') {
          const p =
            t === null
              ? null
              : key === 'max_tokens'
                ? parseSize(t)
                : /^\d+$/.test(t)
                  ? { ok: true as const, value: Number(t) }
                  : null;
          if (!p?.ok || p.value < 1) {
            err(keyNode, `${raw} must be a whole number of at least 1, got '${t ?? ''}'`);
            continue;
          }
          if (key === 'max_turns') def.maxTurns = p.value;
          else def.maxTokens = p.value;
        } else if (key === 'model') {
          if (t !== null && t !== 'inherit') def.model = t;
        } else if (key === 'command') {
          if (t !== null) def.command = t;
        } else if (key === 'agent') {
          if (t === null || t === 'api') continue;
          if (!(AGENT_PRESETS as readonly string[]).includes(t)) {
            const near = closest(t, AGENT_PRESETS);
            err(
              keyNode,
              `agent must be one of ${AGENT_PRESETS.join(', ')} (or api), got '${t}'${near ? ` (did you mean '${near}'?)` : ''}`,
            );
            continue;
          }
          def.agent = t as AgentPresetName;
        } else if (key === 'bin') {
          if (t !== null) def.bin = t;
        } else if (t !== null && (key === 'name' || key === 'description')) def[key] = t;
      }
    }
  }
  if (def.agent !== undefined && def.command !== undefined) {
    errors.push(new InputError(source, null, 'agent: and command: both name who plays the role: keep one'));
  }
  if (def.bin !== undefined && def.agent === undefined) {
    errors.push(
      new InputError(
        source,
        null,
        'bin: names the executable of an agent: preset; add agent: (claude-code, codex, gemini, opencode)',
      ),
    );
  }
  def.prompt = fm.bodyLines.join('\n').trim();
  // An unterminated front matter has already been reported; an empty body is a problem of its own.
  if (def.prompt === '' && errors.length === 0) {
    errors.push(
      new InputError(source, fm.bodyStartLine, 'the role has no system prompt: write it below the front matter'),
    );
  }
  if (errors.length > 0) throw new InputErrors(errors);
  return def;
}

/**
 * The three roles: `<repoRoot>/agents/<role>.md` when it exists, else `<packageAgentsDir>/<role>.md`.
 * Throws InputErrors listing the problems of every file.
 */
export async function loadRoles(
  files: TextFiles,
  packageAgentsDir: string,
  repoRoot: string,
): Promise<Record<Role, RoleDefinition>> {
  const errors: InputError[] = [];
  const roles: Partial<Record<Role, RoleDefinition>> = {};
  for (const role of ROLES) {
    const own = resolve(repoRoot, 'agents', `${role}.md`);
    let source = own;
    let text: string | null;
    try {
      text = await files.readText(own);
      if (text === null) {
        source = resolve(packageAgentsDir, `${role}.md`);
        text = await files.readText(source);
      }
    } catch (e) {
      errors.push(
        new InputError(
          source,
          null,
          `cannot read the ${role} role definition: ${(e as NodeJS.ErrnoException).code ?? String(e)}`,
        ),
      );
      continue;
    }
    if (text === null) {
      errors.push(new InputError(source, null, `cannot read the ${role} role definition: no such file`));
      continue;
    }
    try {
      roles[role] = parseRoleFile(text, source, role);
    } catch (e) {
      if (!(e instanceof InputErrors)) throw e;
      errors.push(...e.errors);
    }
  }
  if (errors.length > 0) throw new InputErrors(errors);
  return roles as Record<Role, RoleDefinition>;
}
