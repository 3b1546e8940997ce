/** UI-only state: what is open, which tab, how far scrolled, what the status line says. Pure reducer. */

export const DETAIL_TABS = ['plan', 'output', 'diff', 'check', 'review', 'history'] as const;
export type DetailTab = (typeof DETAIL_TABS)[number];

export const TAB_TITLE: Readonly<Record<DetailTab, string>> = {
  plan: 'Plan',
  output: 'Output',
  diff: 'Diff',
  check: 'Check',
  review: 'Review',
  history: 'History',
};

/** Tabs whose newest lines are at the bottom: scrolled back from the end, following it at 0. */
export function anchoredAtEnd(tab: DetailTab): boolean {
  return tab === 'output';
}

export interface PendingConfirm {
  readonly command: 'merge' | 'discard' | 'merge-all';
  /** the task asked about; for merge-all, the queue's first task */
  readonly id: string;
  readonly prompt: string;
}

export interface StatusMessage {
  readonly level: 'info' | 'error';
  readonly text: string;
}

export interface ViewState {
  readonly detailOpen: boolean;
  readonly tab: DetailTab;
  /**
   * Lines scrolled away from the tab's anchor (the top, or the end for `output`), valid only for
   * `scrollKey`; any other task or tab starts at 0.
   */
  readonly scroll: number;
  readonly scrollKey: string | null;
  readonly helpOpen: boolean;
  readonly helpScroll: number;
  readonly confirm: PendingConfirm | null;
  readonly status: StatusMessage | null;
  readonly quitting: boolean;
}

export const initialViewState: ViewState = {
  detailOpen: false,
  tab: 'plan',
  scroll: 0,
  scrollKey: null,
  helpOpen: false,
  helpScroll: 0,
  confirm: null,
  status: null,
  quitting: false,
};

export type ViewAction =
  | { type: 'toggle-detail' }
  | { type: 'close' }
  | { type: 'tab'; tab: DetailTab }
  | { type: 'cycle-tab'; delta: number }
  /** scroll by `delta` lines toward the end of the content, within [0, max] */
  | { type: 'scroll'; key: string; delta: number; max: number }
  | { type: 'help-toggle' }
  | { type: 'help-scroll'; delta: number; max: number }
  | { type: 'confirm'; confirm: PendingConfirm }
  | { type: 'confirm-done' }
  | { type: 'status'; status: StatusMessage | null }
  | { type: 'quitting' };

export function scrollKeyOf(id: string | null, tab: DetailTab): string {
  return `${id ?? ''}\u0000${tab}`;
}

export function effectiveScroll(view: ViewState, id: string | null): number {
  return view.scrollKey === scrollKeyOf(id, view.tab) ? view.scroll : 0;
}

const clamp = (n: number, lo: number, hi: number): number => Math.min(Math.max(n, lo), Math.max(lo, hi));

export function viewReducer(view: ViewState, action: ViewAction): ViewState {
  switch (action.type) {
    case 'toggle-detail':
      return { ...view, detailOpen: !view.detailOpen };
    case 'close':
      if (view.helpOpen) return { ...view, helpOpen: false };
      return { ...view, detailOpen: false };
    case 'tab':
      return { ...view, detailOpen: true, tab: action.tab };
    case 'cycle-tab': {
      const i = DETAIL_TABS.indexOf(view.tab);
      const n = DETAIL_TABS.length;
      return { ...view, detailOpen: true, tab: DETAIL_TABS[(((i + action.delta) % n) + n) % n] ?? 'plan' };
    }
    case 'scroll': {
      const current = view.scrollKey === action.key ? view.scroll : 0;
      // For end-anchored tabs the offset counts back from the end, so "toward the end" decreases it.
      const tab = view.tab;
      const next = anchoredAtEnd(tab) ? current - action.delta : current + action.delta;
      return { ...view, scroll: clamp(next, 0, action.max), scrollKey: action.key };
    }
    case 'help-toggle':
      return { ...view, helpOpen: !view.helpOpen, helpScroll: 0 };
    case 'help-scroll':
      return { ...view, helpScroll: clamp(view.helpScroll + action.delta, 0, action.max) };
    case 'confirm':
      return { ...view, confirm: action.confirm, status: null };
    case 'confirm-done':
      return { ...view, confirm: null };
    case 'status':
      return { ...view, status: action.status };
    case 'quitting':
      return {
        ...view,
        quitting: true,
        confirm: null,
        status: { level: 'info', text: 'Stopping the fleet: agents stop, state is kept…' },
      };
  }
}
