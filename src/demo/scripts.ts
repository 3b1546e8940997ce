import { byRole } from './script-kit.js';
import type { Script, ScriptRequest, ScriptTurn } from './script-types.js';

/**
 * The scripted model of `loopfleet demo`. Behaviour is data: one scenario per task id says what the
 * implementer writes and how the task ends. Scripts are stateless — every answer follows from the request
 * (role, task and attempt markers, number of assistant turns so far) — so retries and restarts replay
 * exactly.
 */

export interface DemoEdit {
  /** relative to the worktree */
  path: string;
  content: string;
}

export type DemoKind = 'pass' | 'check-fails' | 'veto' | 'pass-second-attempt';

export interface DemoScenario {
  taskId: string;
  kind: DemoKind;
  /** the change that makes the task's check pass */
  edits: DemoEdit[];
  /** what a failing attempt writes ('check-fails', first attempt of 'pass-second-attempt'); default: see `brokenEdit` */
  failingEdits?: DemoEdit[];
  /** the reviewer's reason for a 'veto' */
  vetoReason?: string;
}

export interface DemoScriptOptions {
  /** pause between streamed events, so a terminal shows the output arrive (0 for tests and benchmarks) */
  chunkDelayMs?: number;
  /** pause before each reply starts */
  delayMs?: number;
}

/** The pacing of `loopfleet demo`: slow enough to watch, fast enough to finish in a minute. */
export const DEMO_PACING: Readonly<Required<DemoScriptOptions>> = Object.freeze({ chunkDelayMs: 15, delayMs: 120 });

const SCRIPT_EXTENSIONS = /\.(c|m)?(j|t)sx?$/;

/** A failing version of an edit: for a script file, the content plus a line that throws when loaded. */
export function brokenEdit(edit: DemoEdit): DemoEdit {
  const defect = SCRIPT_EXTENSIONS.test(edit.path)
    ? "throw new Error('unfinished change: this edit is incomplete');"
    : 'UNFINISHED CHANGE: this edit is incomplete';
  return { path: edit.path, content: `${edit.content.replace(/\n?$/, '\n')}${defect}\n` };
}

function editsFor(scenario: DemoScenario, attempt: number): { edits: DemoEdit[]; failing: boolean } {
  const failing = scenario.kind === 'check-fails' || (scenario.kind === 'pass-second-attempt' && attempt < 2);
  if (!failing) return { edits: scenario.edits, failing };
  return { edits: scenario.failingEdits ?? scenario.edits.map(brokenEdit), failing };
}

function fileList(edits: DemoEdit[]): string {
  return edits.map((e) => `\`${e.path}\``).join(', ');
}

function explorer(find: (id: string | null) => DemoScenario | undefined): Script {
  return (req) => {
    const scenario = find(req.taskId);
    if (req.assistantTurns === 0 && req.tools.includes('glob')) {
      return {
        text: 'Let me look at how the repository is laid out.',
        toolUses: [{ name: 'glob', input: { pattern: '**/*' } }],
      };
    }
    if (scenario === undefined) {
      return { text: `There is no scripted plan for ${req.taskId ?? 'this task'}: nothing to change.` };
    }
    const { edits } = editsFor(scenario, req.attempt);
    const steps = edits.map((e, i) => `${i + 1}. Update \`${e.path}\` so that it does what the task asks.`);
    const retry =
      req.attempt > 1
        ? `\n\nThe previous attempt failed its check. This time, finish every file completely before stopping.`
        : '';
    return {
      text:
        `## Plan for ${scenario.taskId}\n\n${steps.join('\n')}\n${steps.length + 1}. ` +
        `Leave everything else as it is; the check decides when the task is done.\n\nFiles: ${fileList(edits)}.${retry}`,
    };
  };
}

function implementer(find: (id: string | null) => DemoScenario | undefined): Script {
  return (req) => {
    const scenario = find(req.taskId);
    if (scenario === undefined) return { text: 'Nothing was scripted for this task, so I changed nothing.' };
    const { edits, failing } = editsFor(scenario, req.attempt);
    const first = edits[0];
    if (req.assistantTurns === 0 && first !== undefined && req.tools.includes('read')) {
      return {
        text: `First I read \`${first.path}\`.`,
        toolUses: [{ name: 'read', input: { file_path: first.path } }],
      };
    }
    const wrote = req.toolResults.some((r) => r.name === 'write');
    if (!wrote && edits.length > 0 && req.tools.includes('write')) {
      return {
        text: `Now I write the change to ${fileList(edits)}.`,
        toolUses: edits.map((e) => ({ name: 'write', input: { file_path: e.path, content: e.content } })),
      };
    }
    const note = failing ? ' I did not get to verify every case.' : ' It follows the plan step by step.';
    return { text: `Done: I changed ${fileList(edits)}.${note}` };
  };
}

function verifier(find: (id: string | null) => DemoScenario | undefined): Script {
  return (req) => {
    const scenario = find(req.taskId);
    const verdict =
      scenario === undefined
        ? { pass: false, reasons: [`no scripted review for ${req.taskId ?? 'this task'}`] }
        : scenario.kind === 'veto'
          ? {
              pass: false,
              reasons: [
                scenario.vetoReason ??
                  'The check passes, but the change also alters behaviour the task did not ask for.',
              ],
            }
          : {
              pass: true,
              reasons: [
                'The check passes.',
                `The diff is limited to ${fileList(editsFor(scenario, req.attempt).edits)} and matches the plan.`,
              ],
            };
    return { text: JSON.stringify(verdict) };
  };
}

export function demoScript(scenarios: DemoScenario[], options: DemoScriptOptions = {}): Script {
  const byId = new Map(scenarios.map((s) => [s.taskId, s]));
  const find = (id: string | null) => (id === null ? undefined : byId.get(id));
  const script = byRole({
    explorer: explorer(find),
    implementer: implementer(find),
    verifier: verifier(find),
  });
  return async (req: ScriptRequest): Promise<ScriptTurn> => {
    const turn = await script(req);
    return {
      chunkDelayMs: options.chunkDelayMs ?? DEMO_PACING.chunkDelayMs,
      delayMs: options.delayMs ?? DEMO_PACING.delayMs,
      ...turn,
    };
  };
}
