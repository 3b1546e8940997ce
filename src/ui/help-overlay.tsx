import type { ReactNode } from 'react';
import { COMMAND_HELP, formatBindings, HELP_ORDER } from './key-bindings.js';
import type { StyledLine } from './styled-text.js';
import { padEnd } from './format.js';
import { ScrollView } from './scroll-view.js';

/** Every command with all its keys, in key-binding table order. */
export function helpLines(): StyledLine[] {
  const keyWidth = Math.max(...HELP_ORDER.map((c) => formatBindings(c).length)) + 2;
  return [
    { text: 'Keys (Esc or ? closes; PgUp/PgDn scroll)', bold: true },
    ...HELP_ORDER.map((c) => ({ text: `  ${padEnd(formatBindings(c), keyWidth)}${COMMAND_HELP[c]}` })),
    { text: '' },
    { text: 'Status symbols: · queued  ▶ running  ✔ verified  ✓ merged  ✗ failed  ⚠ conflict  ⌫ discarded', dim: true },
  ];
}

export const HELP_LINES: readonly StyledLine[] = helpLines();

export function HelpOverlay({ rows, scroll }: { rows: number; scroll: number }): ReactNode {
  return <ScrollView lines={HELP_LINES} height={rows} offset={scroll} fromEnd={false} />;
}
