import { useRef, type Dispatch } from 'react';
import { useApp } from 'ink';
import type { FleetHandle } from '../core/fleet/handle.js';
import type { TaskState } from '../domain/types.js';
import {
  confirmPrompt,
  doneText,
  errorText,
  mergesByPr,
  pauseAction,
  progressText,
  refusal,
  type TaskCommand,
} from './command-guards.js';
import type { FleetUiState } from './fleet-reducer.js';
import { HELP_LINES } from './help-overlay.js';
import { Command } from './key-bindings.js';
import { maxScroll, type Layout } from './layout.js';
import type { Selection } from './use-selection.js';
import { scrollKeyOf, type DetailTab, type ViewAction, type ViewState } from './view-state.js';

export interface CommandContext {
  fleet: FleetHandle;
  state: FleetUiState;
  /** re-read `fleet.summary()` after a command that changes it */
  refreshSummary: () => void;
  selection: Selection;
  view: ViewState;
  dispatch: Dispatch<ViewAction>;
  layout: Layout;
  /** lines in the detail tab on screen, for scroll limits */
  detailLineCount: number;
  onEditBacklog: () => Promise<void>;
  /** edits a plan in the editor; resolves with the edited text */
  onEditPlan: (id: string, plan: string) => Promise<string>;
}

const TAB_OF: Partial<Record<Command, DetailTab>> = {
  [Command.TabPlan]: 'plan',
  [Command.TabOutput]: 'output',
  [Command.TabDiff]: 'diff',
  [Command.TabCheck]: 'check',
  [Command.TabReview]: 'review',
  [Command.TabHistory]: 'history',
};

/**
 * What each command does. Commands that ask the fleet for something report progress, success or the
 * fleet's refusal in the status line; commands that do not apply say why, and do nothing else.
 */
export function useCommands(ctx: CommandContext): {
  onCommand: (command: Command) => void;
  onUnbound: (input: string) => void;
} {
  const {
    fleet,
    state,
    refreshSummary,
    selection,
    view,
    dispatch,
    layout,
    detailLineCount,
    onEditBacklog,
    onEditPlan,
  } = ctx;
  const { exit, suspendTerminal } = useApp();
  // Refs, not state: a second q or e must see the first one even before a re-render.
  const quitting = useRef(false);
  const editing = useRef(false);

  const say = (text: string, level: 'info' | 'error' = 'info'): void =>
    dispatch({ type: 'status', status: { level, text } });
  const taskOf = (id: string | null): TaskState | undefined => (id === null ? undefined : state.tasks.get(id)?.task);

  const runTaskCommand = (command: TaskCommand, task: TaskState): void => {
    const base = fleet.base;
    const pr = mergesByPr(task, fleet.config);
    say(progressText(command, task, base, pr));
    const call =
      command === 'merge'
        ? fleet.merge(task.id)
        : command === 'discard'
          ? fleet.discard(task.id)
          : command === 'retry'
            ? fleet.retry(task.id)
            : new Promise<void>((resolve) => resolve(fleet.approve(task.id)));
    call.then(
      () => say(doneText(command, task, base, pr)),
      (error: unknown) => say(errorText(error), 'error'),
    );
  };

  const ask = (command: 'merge' | 'discard'): void => {
    const task = taskOf(selection.id);
    const why = refusal(command, task);
    if (why !== null || task === undefined) return say(why ?? 'No task selected', 'error');
    dispatch({
      type: 'confirm',
      confirm: {
        command,
        id: task.id,
        prompt: confirmPrompt(command, task, fleet.base, mergesByPr(task, fleet.config)),
      },
    });
  };

  /** The verified tasks in list order: the order the queue lands them in. */
  const verifiedIds = (): string[] =>
    [...state.tasks.values()]
      .map((r) => r.task)
      .filter((t) => t.status === 'verified')
      .map((t) => t.id);

  const askMergeAll = (): void => {
    const ids = verifiedIds();
    if (ids.length === 0) return say('Nothing to merge: no task is verified', 'error');
    const prompt = `Merge queue onto ${fleet.base}: ${ids.join(', ')} — each rebased onto the last merge and checked again before it lands? y/n`;
    dispatch({ type: 'confirm', confirm: { command: 'merge-all', id: ids[0]!, prompt } });
  };

  const runMergeAll = (): void => {
    say('Merge queue running: each branch is rebased and checked again before it lands…');
    fleet.mergeAll().then(
      (r) => {
        const parts = [`${r.merged.length} merged`];
        if (r.sentBack.length > 0) parts.push(`${r.sentBack.map((s) => s.id).join(', ')} sent back`);
        if (r.conflicts.length > 0) parts.push(`${r.conflicts.map((c) => c.id).join(', ')} conflict`);
        if (r.refused !== null) parts.push(`stopped at ${r.refused.id}: ${r.refused.reason}`);
        say(`Merge queue: ${parts.join('; ')}`, r.refused === null ? 'info' : 'error');
      },
      (error: unknown) => say(errorText(error), 'error'),
    );
  };

  const confirmed = (): void => {
    const pending = view.confirm;
    dispatch({ type: 'confirm-done' });
    if (pending === null) return;
    if (pending.command === 'merge-all') return runMergeAll();
    const task = taskOf(pending.id);
    // The task may have moved on while the question was open: check again.
    const why = refusal(pending.command, task);
    if (why !== null || task === undefined) return say(why ?? `${pending.id} is gone from the backlog`, 'error');
    runTaskCommand(pending.command, task);
  };

  const quit = (): void => {
    if (quitting.current) return exit();
    quitting.current = true;
    dispatch({ type: 'quitting' });
    fleet.stop().then(
      () => exit(),
      (error: unknown) => exit(error instanceof Error ? error : new Error(errorText(error))),
    );
  };

  /** `e` on a task awaiting approval: its plan in the editor, then the edited plan approved. */
  const editPlan = (task: TaskState): void => {
    editing.current = true;
    const plan = task.attempts.findLast((a) => a.plan !== null)?.plan ?? '';
    let edited: string | null = null;
    say(`Editing the plan of ${task.id}…`);
    suspendTerminal(async () => {
      edited = await onEditPlan(task.id, plan);
    })
      .then(() => {
        if (edited === null || edited.trim() === '')
          return say(`The plan of ${task.id} is empty: nothing approved`, 'error');
        fleet.approve(task.id, edited);
        say(`${task.id}'s edited plan is approved: it is queued to implement it`);
      })
      .catch((error: unknown) => say(`Plan of ${task.id}: ${errorText(error)}`, 'error'))
      .finally(() => {
        editing.current = false;
      });
  };

  const edit = (): void => {
    if (editing.current) return;
    const selected = taskOf(selection.id);
    if (selected?.status === 'awaiting-approval') return editPlan(selected);
    editing.current = true;
    say(`Editing ${fleet.backlogPath}…`);
    suspendTerminal(onEditBacklog)
      .then(
        () => say('Back from the editor: changes to BACKLOG.md are picked up as the fleet runs'),
        (error: unknown) => say(`Editor: ${errorText(error)}`, 'error'),
      )
      .finally(() => {
        editing.current = false;
      });
  };

  const togglePause = (): void => {
    const decision = pauseAction(state.summary.state);
    if ('refusal' in decision) return say(decision.refusal, 'error');
    try {
      if (decision.action === 'pause') fleet.pause();
      else fleet.resume();
      refreshSummary();
      say(decision.action === 'pause' ? 'Paused: no new work starts until p is pressed again' : 'Resumed');
    } catch (error) {
      say(errorText(error), 'error');
    }
  };

  const scroll = (lines: number): void => {
    if (view.helpOpen) {
      dispatch({ type: 'help-scroll', delta: lines, max: maxScroll(HELP_LINES.length, layout.helpRows) });
    } else if (view.detailOpen) {
      dispatch({
        type: 'scroll',
        key: scrollKeyOf(selection.id, view.tab),
        delta: lines,
        max: maxScroll(detailLineCount, layout.detailBodyRows),
      });
    } else {
      selection.moveBy(lines);
    }
  };
  const page = (): number =>
    Math.max(1, (view.helpOpen ? layout.helpRows : view.detailOpen ? layout.detailBodyRows : layout.listRows) - 1);

  const onCommand = (command: Command): void => {
    if (command !== Command.ConfirmYes && command !== Command.ConfirmNo) dispatch({ type: 'status', status: null });
    const tab = TAB_OF[command];
    if (tab !== undefined) return dispatch({ type: 'tab', tab });
    switch (command) {
      case Command.SelectUp:
        return selection.moveBy(-1);
      case Command.SelectDown:
        return selection.moveBy(1);
      case Command.SelectFirst:
        return selection.moveTo(0);
      case Command.SelectLast:
        return selection.moveTo(state.order.length - 1);
      case Command.PageUp:
        return scroll(-page());
      case Command.PageDown:
        return scroll(page());
      case Command.ScrollUp:
        return scroll(-1);
      case Command.ScrollDown:
        return scroll(1);
      case Command.ToggleDetail:
        return dispatch({ type: 'toggle-detail' });
      case Command.NextTab:
        return dispatch({ type: 'cycle-tab', delta: 1 });
      case Command.PrevTab:
        return dispatch({ type: 'cycle-tab', delta: -1 });
      case Command.Merge:
        return ask('merge');
      case Command.MergeAll:
        return askMergeAll();
      case Command.Discard:
        return ask('discard');
      case Command.Retry: {
        const task = taskOf(selection.id);
        const why = refusal('retry', task);
        if (why !== null || task === undefined) return say(why ?? 'No task selected', 'error');
        return runTaskCommand('retry', task);
      }
      case Command.Approve: {
        const task = taskOf(selection.id);
        const why = refusal('approve', task);
        if (why !== null || task === undefined) return say(why ?? 'No task selected', 'error');
        return runTaskCommand('approve', task);
      }
      case Command.Pause:
        return togglePause();
      case Command.EditBacklog:
        return edit();
      case Command.Help:
        return dispatch({ type: 'help-toggle' });
      case Command.Close:
        return dispatch({ type: 'close' });
      case Command.ConfirmYes:
        return confirmed();
      case Command.ConfirmNo: {
        const pending = view.confirm;
        dispatch({ type: 'confirm-done' });
        if (pending?.command === 'merge-all') return say('Merge queue cancelled');
        return say(
          pending === null
            ? 'Cancelled'
            : `${pending.command === 'merge' ? 'Merge' : 'Discard'} of ${pending.id} cancelled`,
        );
      }
      case Command.Quit:
      case Command.Interrupt:
        return quit();
      default:
        return;
    }
  };

  const onUnbound = (input: string): void => {
    if (view.confirm !== null || input.length !== 1 || input.trim() === '') return;
    say(`${JSON.stringify(input)} does nothing here: press ? for the keys`);
  };

  return { onCommand, onUnbound };
}
