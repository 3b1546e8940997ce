import type { Script, ScriptRequest, ScriptTurn, ToolResultSeen } from './script-types.js';

/**
 * Scripts in which the fake model plays a role for the real Claude Code CLI: it answers with calls of
 * Claude Code's own tools (Read, Edit, Write, Bash — absolute paths, Edit only after a Read of the same
 * file, as Claude Code demands), one step per turn, then a final text. Stateless: the step is the number
 * of assistant turns so far, so a retried request replays the same step.
 */

export type ClaudeCodeStep =
  | { tool: 'Read'; path: string }
  | { tool: 'Edit'; path: string; oldString: string; newString: string }
  | { tool: 'Write'; path: string; content: string }
  | { tool: 'Bash'; command: string };

export interface ClaudeCodeRoleScript {
  steps: ClaudeCodeStep[];
  /** the final answer once every step has had its result */
  final: string;
  /** a thinking block on every turn (Claude Code asks for adaptive thinking) */
  think?: boolean;
}

/** What a script saw come back from Claude Code, for tests to assert on. */
export interface ToolOutcome {
  step: ClaudeCodeStep;
  result: ToolResultSeen;
}

const WORKDIR = /Primary working directory: *(\S+)/;

/** The session's working folder, from the environment block Claude Code puts into its requests. */
export function workdirOf(req: ScriptRequest): string | null {
  for (const text of [req.systemMessages, req.prompt, req.system, req.lastUserText]) {
    const match = WORKDIR.exec(text);
    if (match) return match[1]!;
  }
  return null;
}

function toolUse(step: ClaudeCodeStep, workdir: string): ScriptTurn['toolUses'] {
  const abs = (p: string) => (p.startsWith('/') ? p : `${workdir}/${p}`);
  switch (step.tool) {
    case 'Read':
      return [{ name: 'Read', input: { file_path: abs(step.path) } }];
    case 'Edit':
      return [
        { name: 'Edit', input: { file_path: abs(step.path), old_string: step.oldString, new_string: step.newString } },
      ];
    case 'Write':
      return [{ name: 'Write', input: { file_path: abs(step.path), content: step.content } }];
    case 'Bash':
      return [{ name: 'Bash', input: { command: step.command, description: 'run a command' } }];
  }
}

/**
 * A script for one role. `outcomes`, when given, receives each step's tool result as Claude Code sent it
 * back (the refusal of a denied tool included).
 */
export function claudeCodeRole(script: ClaudeCodeRoleScript, outcomes?: ToolOutcome[]): Script {
  return (req) => {
    const step = req.assistantTurns;
    const previous = script.steps[step - 1];
    const seen = req.toolResults[0];
    if (outcomes && previous && seen && req.repeat === 0) outcomes.push({ step: previous, result: seen });
    const thinking = script.think ? { thinking: `Step ${step + 1}: deciding what to do next.` } : {};
    const next = script.steps[step];
    if (next === undefined) return { ...thinking, text: script.final };
    const workdir = workdirOf(req);
    if (workdir === null) return { text: 'cannot find the working directory in the request' };
    return { ...thinking, text: `Step ${step + 1}.`, toolUses: toolUse(next, workdir) };
  };
}
