import { render } from 'ink';
import type { FleetHandle } from '../core/fleet/handle.js';
import type { SandboxCause } from '../domain/sandbox-cause.js';
import { App } from './app.js';
import type { Notice } from './fleet-reducer.js';
import { editText, runEditor } from './editor.js';

export interface RenderTuiOptions {
  /** false for `--no-color` or a set `NO_COLOR`: see `colorWanted` */
  color: boolean;
  /** default: `runEditor(fleet.backlogPath)` with the same stdin */
  onEditBacklog?: () => Promise<void>;
  /** default: `editText(plan)` in $VISUAL / $EDITOR with the same stdin */
  onEditPlan?: (id: string, plan: string) => Promise<string>;
  stdout?: NodeJS.WriteStream;
  stdin?: NodeJS.ReadStream;
  /** terminal bell on verified / failed / conflict and when the fleet goes idle; default true */
  bell?: boolean;
  /** draw on the alternate screen, like less or htop, leaving the shell's scrollback alone; default true */
  alternateScreen?: boolean;
  /** route console output above the frame instead of through it; default true */
  patchConsole?: boolean;
  /** called after each frame Ink commits (for latency measurements) */
  onRender?: (metrics: { renderTime: number }) => void;
  /** what stops bubblewrap on this host, for the fleet bar's sandbox warning */
  sandboxCause?: SandboxCause | null;
  /** a line said at start, in the status line until another notice replaces it */
  startNotice?: Notice | null;
}

/** `--no-color` and `NO_COLOR` (https://no-color.org: any non-empty value) both turn colour off. */
export function colorWanted(noColorFlag: boolean, env: NodeJS.ProcessEnv = process.env): boolean {
  const noColor = env['NO_COLOR'];
  return !noColorFlag && (noColor === undefined || noColor === '');
}

/**
 * Runs the interactive TUI over a fleet until the person quits (q or Ctrl+C, which stop the fleet
 * first). Resolves after the fleet has stopped and the terminal is restored; rejects if stopping failed.
 */
export async function renderTui(fleet: FleetHandle, opts: RenderTuiOptions): Promise<void> {
  const stdin = opts.stdin ?? process.stdin;
  const onEditBacklog = opts.onEditBacklog ?? (() => runEditor(fleet.backlogPath, { stdin }));
  const onEditPlan = opts.onEditPlan ?? ((id: string, plan: string) => editText(plan, `${id}-plan.md`, { stdin }));
  const stdout = opts.stdout ?? process.stdout;
  const instance = render(
    <App
      fleet={fleet}
      color={opts.color}
      onEditBacklog={onEditBacklog}
      onEditPlan={onEditPlan}
      bell={opts.bell ?? true}
      sandboxCause={opts.sandboxCause ?? null}
      startNotice={opts.startNotice ?? null}
    />,
    {
      stdout,
      // A terminal is a terminal even where CI=true is set: Ink would otherwise draw nothing until exit.
      interactive: Boolean(stdout.isTTY),
      stdin,
      // Ctrl+C is a command of the app (stop the fleet, then exit), not Ink's immediate exit.
      exitOnCtrlC: false,
      alternateScreen: opts.alternateScreen ?? true,
      patchConsole: opts.patchConsole ?? true,
      ...(opts.onRender === undefined ? {} : { onRender: opts.onRender }),
      maxFps: 30,
    },
  );
  try {
    await instance.waitUntilExit();
  } finally {
    instance.cleanup();
  }
}
