/**
 * How the terminal's rows are shared out. Pure, so the input handler (page sizes, scroll limits) and the
 * components agree on every height.
 *
 * Invariant: barRows + headerRows + listRows + detailRows + helpRows + statusRows + footerRows === rows,
 * for any rows ≥ 1 — the frame never grows past the terminal, and never scrolls it.
 */
export interface Layout {
  readonly barRows: number;
  /** the list's column titles */
  readonly headerRows: number;
  readonly listRows: number;
  /** the whole detail pane (its title, its tab line and `detailBodyRows`), 0 when closed */
  readonly detailRows: number;
  readonly detailBodyRows: number;
  /** the help overlay takes the list's and the detail's place */
  readonly helpRows: number;
  readonly statusRows: number;
  readonly footerRows: number;
}

export interface LayoutInput {
  rows: number;
  /** lines the fleet bar wants (2, or 3 with the sandbox warning) */
  barLines: number;
  taskCount: number;
  detailOpen: boolean;
  helpOpen: boolean;
}

/** Lines the detail pane uses besides its body: the task line and the tab line. */
export const DETAIL_CHROME = 2;

export function computeLayout({ rows, barLines, taskCount, detailOpen, helpOpen }: LayoutInput): Layout {
  const total = Math.max(1, Math.floor(rows));
  const statusRows = 1;
  const footerRows = total >= 12 ? 1 : 0;
  let barRows = Math.min(barLines, Math.max(0, total - statusRows - footerRows - 1));
  if (total < 8) barRows = Math.min(barRows, 1);
  let rest = total - statusRows - footerRows - barRows;

  if (helpOpen) {
    return {
      barRows,
      headerRows: 0,
      listRows: 0,
      detailRows: 0,
      detailBodyRows: 0,
      helpRows: rest,
      statusRows,
      footerRows,
    };
  }

  const headerRows = rest >= 4 ? 1 : 0;
  rest -= headerRows;

  if (!detailOpen) {
    return {
      barRows,
      headerRows,
      listRows: rest,
      detailRows: 0,
      detailBodyRows: 0,
      helpRows: 0,
      statusRows,
      footerRows,
    };
  }

  // Too short for both: the detail takes the place of the list.
  if (rest < DETAIL_CHROME + 6) {
    return {
      barRows,
      headerRows: 0,
      listRows: 0,
      detailRows: rest + headerRows,
      detailBodyRows: Math.max(0, rest + headerRows - DETAIL_CHROME),
      helpRows: 0,
      statusRows,
      footerRows,
    };
  }
  const listRows = Math.max(1, Math.min(Math.max(1, taskCount), Math.floor(rest * 0.3)));
  const detailRows = rest - listRows;
  return {
    barRows,
    headerRows,
    listRows,
    detailRows,
    detailBodyRows: detailRows - DETAIL_CHROME,
    helpRows: 0,
    statusRows,
    footerRows,
  };
}

/**
 * First visible row of a list window: moves only as far as needed to keep `selected` in view, so the
 * list does not jump on every keypress. Always within [0, max(0, count - height)].
 */
export function windowStart(previousStart: number, selected: number, height: number, count: number): number {
  if (height <= 0 || count <= 0) return 0;
  let start = Math.min(Math.max(0, previousStart), Math.max(0, count - height));
  if (selected < start) start = selected;
  else if (selected >= start + height) start = selected - height + 1;
  return Math.min(Math.max(0, start), Math.max(0, count - height));
}

/** First visible line of scrollable content, from an offset counted from the top or back from the end. */
export function scrollStart(lineCount: number, height: number, offset: number, fromEnd: boolean): number {
  const max = Math.max(0, lineCount - height);
  const o = Math.min(Math.max(0, offset), max);
  return fromEnd ? max - o : o;
}

export function maxScroll(lineCount: number, height: number): number {
  return Math.max(0, lineCount - height);
}
