import { useMemo, useReducer, type ReactNode } from 'react';
import { Box, useWindowSize } from 'ink';
import type { FleetHandle } from '../core/fleet/handle.js';
import type { SandboxCause } from '../domain/sandbox-cause.js';
import { detailLines } from './detail-content.js';
import type { StyledLine } from './styled-text.js';
import { DetailPane } from './detail-pane.js';
import { countByStatus, liveFleetElapsed, type Notice } from './fleet-reducer.js';
import { FleetBar, fleetBarLines, fleetTokens } from './fleet-bar.js';
import { Footer } from './footer.js';
import { basename } from './format.js';
import { HelpOverlay } from './help-overlay.js';
import type { InputMode } from './key-bindings.js';
import { computeLayout } from './layout.js';
import { idWidthOf, rowColumns } from './row-columns.js';
import { StatusLine } from './status-line.js';
import { ColorContext } from './styled-text.js';
import { TaskList, TaskListHeader } from './task-list.js';
import { waitsForNextRun } from './task-row.js';
import { useBell } from './use-bell.js';
import { useClock } from './use-clock.js';
import { useCommands } from './use-commands.js';
import { useDiff } from './use-diff.js';
import { useFleetState } from './use-fleet-state.js';
import { useKeyHandler } from './use-key-handler.js';
import { useSelection } from './use-selection.js';
import { effectiveScroll, initialViewState, viewReducer } from './view-state.js';

export interface AppProps {
  fleet: FleetHandle;
  /** false for `--no-color` / `NO_COLOR`: no ANSI styles at all; symbols carry the meaning */
  color: boolean;
  /**
   * Opens BACKLOG.md in the person's editor. The app runs it inside Ink's `suspendTerminal`, so Ink neither
   * draws nor reads keys until it settles.
   */
  onEditBacklog: () => Promise<void>;
  /** Opens a plan awaiting approval in the editor, run like onEditBacklog; resolves with the edited text. */
  onEditPlan?: (id: string, plan: string) => Promise<string>;
  /** ring the terminal bell on verified / failed / conflict and when the fleet goes idle; default true */
  bell?: boolean;
  /** what stops bubblewrap on this host, for the fleet bar's sandbox warning */
  sandboxCause?: SandboxCause | null;
  /** a line said at start (with --queue: the workers that take jobs, or that none does), shown until another notice */
  startNotice?: Notice | null;
}

const NO_LINES: readonly StyledLine[] = [];
const NO_PLAN_EDITOR = (): Promise<string> => Promise.reject(new Error('no editor for plans here'));

/** The whole TUI: fleet bar, task list, detail pane or help, status line and footer, sized to the terminal. */
export function App({
  fleet,
  color,
  onEditBacklog,
  onEditPlan = NO_PLAN_EDITOR,
  bell = true,
  sandboxCause = null,
  startNotice = null,
}: AppProps): ReactNode {
  const { columns, rows } = useWindowSize();
  const [state, refreshSummary] = useFleetState(fleet, startNotice);
  useBell(fleet, bell);
  const [view, dispatch] = useReducer(viewReducer, initialViewState);
  const selection = useSelection(state.order);
  const counts = useMemo(() => countByStatus(state.tasks), [state.tasks]);
  const recurringWaits = useMemo(() => [...state.tasks.values()].some((e) => waitsForNextRun(e.task)), [state.tasks]);
  // A countdown to a recurring task's next run moves even while the fleet is idle.
  const now = useClock(
    counts.running > 0 || state.summary.state === 'running' || state.summary.hold !== undefined || recurringWaits,
  );

  const layout = computeLayout({
    rows,
    barLines: fleetBarLines(fleet.sandboxed),
    taskCount: state.order.length,
    detailOpen: view.detailOpen,
    helpOpen: view.helpOpen,
  });
  const task = selection.id === null ? undefined : state.tasks.get(selection.id)?.task;
  const showDetail = layout.detailRows > 0;
  const diff = useDiff(fleet, task, showDetail && view.tab === 'diff');
  const output = selection.id === null ? undefined : state.output.get(selection.id);
  const phaseOutput = selection.id === null ? undefined : state.phaseOutput.get(selection.id);
  const lines = useMemo(
    () =>
      showDetail && task !== undefined
        ? detailLines(
            view.tab,
            { task, output, phaseOutput, diff, base: fleet.base, review: fleet.config.review },
            columns - 1,
          )
        : NO_LINES,
    [showDetail, view.tab, task, output, phaseOutput, diff, fleet, columns],
  );
  const scroll = effectiveScroll(view, selection.id);

  const mode: InputMode =
    view.confirm !== null ? 'confirm' : view.helpOpen ? 'help' : view.detailOpen ? 'detail' : 'normal';
  const { onCommand, onUnbound } = useCommands({
    fleet,
    state,
    refreshSummary,
    selection,
    view,
    dispatch,
    layout,
    detailLineCount: lines.length,
    onEditBacklog,
    onEditPlan,
  });
  useKeyHandler(mode, onCommand, onUnbound);

  const anyPhase = counts.running > 0;
  const cols = useMemo(
    () => rowColumns(columns, idWidthOf(state.order), { phase: anyPhase }),
    [columns, state.order, anyPhase],
  );
  const { totals } = state.summary;

  return (
    <ColorContext.Provider value={color}>
      <Box flexDirection="column" height={rows} overflow="hidden">
        <FleetBar
          repo={basename(fleet.repoRoot)}
          base={fleet.base}
          state={state.summary.state}
          stoppedBy={state.summary.stoppedBy}
          hold={state.summary.hold}
          review={state.summary.review}
          now={now}
          counts={counts}
          tokens={fleetTokens(totals)}
          costUsd={totals.costUsd}
          elapsedMs={liveFleetElapsed(state, now)}
          gates={fleet.config.fleetGates}
          sandboxed={fleet.sandboxed}
          sandbox={fleet.config.sandbox}
          sandboxCause={sandboxCause}
          columns={columns}
          rows={layout.barRows}
        />
        {layout.headerRows > 0 && <TaskListHeader cols={cols} position={selection.index} count={state.order.length} />}
        {layout.listRows > 0 && (
          <TaskList
            order={state.order}
            tasks={state.tasks}
            selectedIndex={selection.index}
            height={layout.listRows}
            cols={cols}
            gates={fleet.config.gates}
            now={now}
          />
        )}
        {showDetail && <DetailPane task={task} tab={view.tab} lines={lines} scroll={scroll} rows={layout.detailRows} />}
        {layout.helpRows > 0 && <HelpOverlay rows={layout.helpRows} scroll={view.helpScroll} />}
        <StatusLine confirm={view.confirm} status={view.status} notice={state.notice} />
        {layout.footerRows > 0 && <Footer mode={mode} />}
      </Box>
    </ColorContext.Provider>
  );
}
