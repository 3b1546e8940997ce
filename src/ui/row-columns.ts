import { parentOf } from '../core/backlog/scan.js';
/**
 * Column widths of the task list for a terminal width. The title is what a person reads first: the other
 * columns give way to it until it has room for its first TITLE_KEEP characters — the meters first, then the
 * phase, elapsed time, cost, tokens and attempt. A phase column that no row would fill (no task running) is
 * not shown at all. The title takes what is left. Every width includes the gap after the column.
 */
export interface RowColumns {
  readonly marker: number;
  readonly id: number;
  readonly status: number;
  readonly title: number;
  readonly phase: number;
  readonly attempt: number;
  readonly tokens: number;
  readonly cost: number;
  readonly elapsed: number;
  readonly meters: boolean;
}

const MARKER = 2;
const STATUS = 12; // "⌫ discarded" + gap
const PHASE = 10; // "implement" + gap
const ATTEMPT = 6; // "10/10" + gap
const TOKENS = 7; // "12.3M" right-aligned in 6 + gap
const COST = 8; // "$12.34" right-aligned in 7 + gap
const ELAPSED = 8; // "12m 05s" right-aligned in 7 + gap
const METER = 6; // " ▮▮▯▯▯" (the gap after it is the column's own)
/** The characters of a title that every row shows before any other column or annotation gets room (at 80 columns too). */
export const TITLE_KEEP = 30;

/** `phase`: whether any row has a phase to show (a task is running); without one the column collapses. */
export function rowColumns(totalWidth: number, idWidth: number, options: { phase?: boolean } = {}): RowColumns {
  const id = Math.min(Math.max(idWidth, 2), 12) + 1;
  // Ink needs the last cell free on some terminals; keep one column spare.
  const width = Math.max(20, totalWidth - 1);
  const cols = {
    marker: MARKER,
    id,
    status: STATUS,
    title: 0,
    phase: (options.phase ?? true) ? PHASE : 0,
    attempt: ATTEMPT,
    tokens: TOKENS + METER,
    cost: COST + METER,
    elapsed: ELAPSED,
    meters: true,
  };
  const fixed = (): number =>
    cols.marker + cols.id + cols.status + cols.phase + cols.attempt + cols.tokens + cols.cost + cols.elapsed;
  const drops: (() => void)[] = [
    () => Object.assign(cols, { meters: false, tokens: TOKENS, cost: COST }),
    () => Object.assign(cols, { phase: 0 }),
    () => Object.assign(cols, { elapsed: 0 }),
    () => Object.assign(cols, { cost: 0 }),
    () => Object.assign(cols, { tokens: 0 }),
    () => Object.assign(cols, { attempt: 0 }),
  ];
  for (const drop of drops) {
    // TITLE_KEEP characters, the `…` of a longer title and the column's gap.
    if (width - fixed() >= TITLE_KEEP + 2) break;
    drop();
  }
  return { ...cols, title: Math.max(1, width - fixed()) };
}

/** The widest id among the tasks, for a stable id column. */
export function idWidthOf(ids: readonly string[]): number {
  let w = 2;
  // A part's id is drawn under its task's, after `└ `.
  for (const id of ids) w = Math.max(w, parentOf(id) === null ? id.length : id.length + 2);
  return w;
}
