import type { Key } from 'ink';

/**
 * Every action the TUI can take, and the keys that trigger it. The input handler, the footer and the help
 * overlay all read this one table, so a key cannot be documented without working or work without being
 * documented.
 */
export const Command = {
  SelectUp: 'select-up',
  SelectDown: 'select-down',
  SelectFirst: 'select-first',
  SelectLast: 'select-last',
  PageUp: 'page-up',
  PageDown: 'page-down',
  ScrollUp: 'scroll-up',
  ScrollDown: 'scroll-down',
  ToggleDetail: 'toggle-detail',
  NextTab: 'next-tab',
  PrevTab: 'prev-tab',
  TabPlan: 'tab-plan',
  TabOutput: 'tab-output',
  TabDiff: 'tab-diff',
  TabCheck: 'tab-check',
  TabReview: 'tab-review',
  TabHistory: 'tab-history',
  Merge: 'merge',
  MergeAll: 'merge-all',
  Discard: 'discard',
  Retry: 'retry',
  Approve: 'approve',
  Pause: 'pause',
  EditBacklog: 'edit-backlog',
  Help: 'help',
  Close: 'close',
  ConfirmYes: 'confirm-yes',
  ConfirmNo: 'confirm-no',
  Quit: 'quit',
  Interrupt: 'interrupt',
} as const;
export type Command = (typeof Command)[keyof typeof Command];

/** Keys Ink reports by name rather than by the character typed. */
export type NamedKey =
  | 'up'
  | 'down'
  | 'left'
  | 'right'
  | 'pageup'
  | 'pagedown'
  | 'home'
  | 'end'
  | 'return'
  | 'tab'
  | 'escape';

export interface KeyBinding {
  /** a single printable character (`'k'`, `'G'`, `'?'`) or a named key */
  readonly key: string;
  readonly named?: boolean;
  readonly ctrl?: boolean;
  /** only for named keys: printable characters already say whether shift was held (`G` vs `g`) */
  readonly shift?: boolean;
}

const ch = (key: string, mods: { ctrl?: boolean } = {}): KeyBinding => ({ key, ...mods });
const named = (key: NamedKey, mods: { shift?: boolean } = {}): KeyBinding => ({ key, named: true, ...mods });

export const KEY_BINDINGS: Readonly<Record<Command, readonly KeyBinding[]>> = {
  [Command.SelectUp]: [named('up'), ch('k')],
  [Command.SelectDown]: [named('down'), ch('j')],
  [Command.SelectFirst]: [named('home'), ch('g')],
  [Command.SelectLast]: [named('end'), ch('G')],
  [Command.PageUp]: [named('pageup')],
  [Command.PageDown]: [named('pagedown')],
  [Command.ScrollUp]: [named('up', { shift: true }), ch('K')],
  [Command.ScrollDown]: [named('down', { shift: true }), ch('J')],
  [Command.ToggleDetail]: [named('return'), named('tab')],
  [Command.NextTab]: [named('right'), ch('l')],
  [Command.PrevTab]: [named('left'), ch('h')],
  [Command.TabPlan]: [ch('1')],
  [Command.TabOutput]: [ch('2')],
  [Command.TabDiff]: [ch('3')],
  [Command.TabCheck]: [ch('4')],
  [Command.TabReview]: [ch('5')],
  [Command.TabHistory]: [ch('6')],
  [Command.Merge]: [ch('m')],
  [Command.MergeAll]: [ch('M')],
  [Command.Discard]: [ch('d')],
  [Command.Retry]: [ch('r')],
  [Command.Approve]: [ch('a')],
  [Command.Pause]: [ch('p')],
  [Command.EditBacklog]: [ch('e')],
  [Command.Help]: [ch('?')],
  [Command.Close]: [named('escape')],
  [Command.ConfirmYes]: [ch('y')],
  [Command.ConfirmNo]: [ch('n'), named('escape')],
  [Command.Quit]: [ch('q')],
  [Command.Interrupt]: [ch('c', { ctrl: true })],
};

/** What each command does, as the help overlay says it. */
export const COMMAND_HELP: Readonly<Record<Command, string>> = {
  [Command.SelectUp]: 'select the previous task',
  [Command.SelectDown]: 'select the next task',
  [Command.SelectFirst]: 'select the first task',
  [Command.SelectLast]: 'select the last task',
  [Command.PageUp]: 'scroll the detail (or the list) up a page',
  [Command.PageDown]: 'scroll the detail (or the list) down a page',
  [Command.ScrollUp]: 'scroll the detail up a line',
  [Command.ScrollDown]: 'scroll the detail down a line',
  [Command.ToggleDetail]: 'open or close the detail of the selected task',
  [Command.NextTab]: 'next detail tab',
  [Command.PrevTab]: 'previous detail tab',
  [Command.TabPlan]: 'detail: plan',
  [Command.TabOutput]: 'detail: live agent output',
  [Command.TabDiff]: 'detail: diff against base',
  [Command.TabCheck]: 'detail: check output',
  [Command.TabReview]: "detail: reviewer's verdict",
  [Command.TabHistory]: 'detail: attempt history',
  [Command.Merge]: 'merge a verified task into base (asks first)',
  [Command.MergeAll]: 'merge queue: every verified task, each checked again on the last merge (asks first)',
  [Command.Discard]: 'discard a verified, failed, conflict or awaiting-approval task (asks first)',
  [Command.Retry]: 'retry a failed, conflict or discarded task',
  [Command.Approve]: 'approve the plan of a task awaiting approval (e edits it first)',
  [Command.Pause]: 'pause or resume the fleet',
  [Command.EditBacklog]:
    'open BACKLOG.md in $VISUAL / $EDITOR; on a task awaiting approval, edit its plan and approve it',
  [Command.Help]: 'show or hide this help',
  [Command.Close]: 'close the help or the detail',
  [Command.ConfirmYes]: 'confirm the question in the status line',
  [Command.ConfirmNo]: 'cancel the question in the status line',
  [Command.Quit]: 'quit: agents stop, state is kept, a later start resumes',
  [Command.Interrupt]: 'quit (same as q; press twice to leave without waiting)',
};

/** One word per command for the footer. */
export const COMMAND_SHORT: Readonly<Record<Command, string>> = {
  [Command.SelectUp]: 'up',
  [Command.SelectDown]: 'down',
  [Command.SelectFirst]: 'first',
  [Command.SelectLast]: 'last',
  [Command.PageUp]: 'page up',
  [Command.PageDown]: 'page down',
  [Command.ScrollUp]: 'scroll',
  [Command.ScrollDown]: 'scroll',
  [Command.ToggleDetail]: 'detail',
  [Command.NextTab]: 'tab',
  [Command.PrevTab]: 'tab',
  [Command.TabPlan]: 'plan',
  [Command.TabOutput]: 'output',
  [Command.TabDiff]: 'diff',
  [Command.TabCheck]: 'check',
  [Command.TabReview]: 'review',
  [Command.TabHistory]: 'history',
  [Command.Merge]: 'merge',
  [Command.MergeAll]: 'merge all',
  [Command.Discard]: 'discard',
  [Command.Retry]: 'retry',
  [Command.Approve]: 'approve',
  [Command.Pause]: 'pause',
  [Command.EditBacklog]: 'edit',
  [Command.Help]: 'help',
  [Command.Close]: 'close',
  [Command.ConfirmYes]: 'yes',
  [Command.ConfirmNo]: 'no',
  [Command.Quit]: 'quit',
  [Command.Interrupt]: 'quit',
};

/** Help overlay order: every command appears exactly once. */
export const HELP_ORDER: readonly Command[] = Object.values(Command);

export type InputMode = 'normal' | 'detail' | 'help' | 'confirm';

const ALWAYS: readonly Command[] = [Command.Interrupt];
const SCROLLING: readonly Command[] = [Command.PageUp, Command.PageDown, Command.ScrollUp, Command.ScrollDown];

/** The commands each mode listens to; a key bound to anything else does nothing in that mode. */
export const MODE_COMMANDS: Readonly<Record<InputMode, readonly Command[]>> = {
  confirm: [Command.ConfirmYes, Command.ConfirmNo, ...ALWAYS],
  help: [Command.Help, Command.Close, Command.Quit, ...SCROLLING, ...ALWAYS],
  normal: HELP_ORDER.filter((c) => c !== Command.ConfirmYes && c !== Command.ConfirmNo),
  detail: HELP_ORDER.filter((c) => c !== Command.ConfirmYes && c !== Command.ConfirmNo),
};

/** Footer hints per mode. */
export const FOOTER_COMMANDS: Readonly<Record<InputMode, readonly Command[]>> = {
  normal: [
    Command.SelectUp,
    Command.SelectDown,
    Command.ToggleDetail,
    Command.Merge,
    Command.MergeAll,
    Command.Discard,
    Command.Retry,
    Command.Pause,
    Command.EditBacklog,
    Command.Help,
    Command.Quit,
  ],
  detail: [
    Command.SelectUp,
    Command.SelectDown,
    Command.PrevTab,
    Command.NextTab,
    Command.PageUp,
    Command.PageDown,
    Command.Close,
    Command.Merge,
    Command.Discard,
    Command.Retry,
    Command.Help,
    Command.Quit,
  ],
  help: [Command.PageUp, Command.PageDown, Command.Close, Command.Quit],
  confirm: [Command.ConfirmYes, Command.ConfirmNo],
};

/** The named key Ink reports, if any. */
export function namedKey(key: Key): NamedKey | null {
  if (key.upArrow) return 'up';
  if (key.downArrow) return 'down';
  if (key.leftArrow) return 'left';
  if (key.rightArrow) return 'right';
  if (key.pageUp) return 'pageup';
  if (key.pageDown) return 'pagedown';
  if (key.home) return 'home';
  if (key.end) return 'end';
  if (key.return) return 'return';
  if (key.tab) return 'tab';
  if (key.escape) return 'escape';
  return null;
}

export function matches(binding: KeyBinding, input: string, key: Key): boolean {
  if (Boolean(binding.ctrl) !== key.ctrl) return false;
  if (binding.named) return namedKey(key) === binding.key && Boolean(binding.shift) === key.shift;
  return input === binding.key && !key.meta;
}

/** The first command among `allowed` that the key is bound to, in `allowed` order. */
export function commandFor(input: string, key: Key, allowed: readonly Command[]): Command | null {
  for (const command of allowed) {
    if (KEY_BINDINGS[command].some((b) => matches(b, input, key))) return command;
  }
  return null;
}

const NAMED_LABEL: Readonly<Record<NamedKey, string>> = {
  up: '↑',
  down: '↓',
  left: '←',
  right: '→',
  pageup: 'PgUp',
  pagedown: 'PgDn',
  home: 'Home',
  end: 'End',
  return: 'Enter',
  tab: 'Tab',
  escape: 'Esc',
};

export function formatBinding(binding: KeyBinding): string {
  const base = binding.named ? NAMED_LABEL[binding.key as NamedKey] : binding.key;
  if (binding.ctrl) return `Ctrl+${base.toUpperCase()}`;
  if (binding.shift) return `Shift+${base}`;
  return base;
}

export function formatBindings(command: Command): string {
  return KEY_BINDINGS[command].map(formatBinding).join(' ');
}
