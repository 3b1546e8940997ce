import type { ReactNode } from 'react';
import { Box, Text } from 'ink';
import type { TaskState } from '../domain/types.js';
import type { StyledLine } from './styled-text.js';
import { KEY_BINDINGS, Command, formatBinding } from './key-bindings.js';
import { DETAIL_CHROME } from './layout.js';
import { positionText, ScrollView } from './scroll-view.js';
import { singleLine } from './format.js';
import { Styled } from './styled-text.js';
import { STATUS_COLOR, STATUS_SYMBOL } from './theme.js';
import { anchoredAtEnd, DETAIL_TABS, TAB_TITLE, type DetailTab } from './view-state.js';
import { taskBranch } from '../domain/layout.js';

const TAB_COMMAND: Readonly<Record<DetailTab, Command>> = {
  plan: Command.TabPlan,
  output: Command.TabOutput,
  diff: Command.TabDiff,
  check: Command.TabCheck,
  review: Command.TabReview,
  history: Command.TabHistory,
};

export interface DetailPaneProps {
  task: TaskState | undefined;
  tab: DetailTab;
  lines: readonly StyledLine[];
  scroll: number;
  /** the whole pane, title and tab line included */
  rows: number;
}

/** The tab line: the current tab in brackets (readable without colour), each with its key. */
function TabLine({ tab, position }: { tab: DetailTab; position: string }): ReactNode {
  return (
    <Text wrap="truncate-end">
      {DETAIL_TABS.map((t) => {
        const key = KEY_BINDINGS[TAB_COMMAND[t]][0];
        const label = `${key === undefined ? '' : formatBinding(key)} ${TAB_TITLE[t]}`;
        return t === tab ? (
          <Styled key={t} bold inverse>{`[${label}]`}</Styled>
        ) : (
          <Styled key={t} dim>{` ${label} `}</Styled>
        );
      })}
      {position !== '' && <Styled dim>{`  ${position}`}</Styled>}
    </Text>
  );
}

export function DetailPane({ task, tab, lines, scroll, rows }: DetailPaneProps): ReactNode {
  if (rows <= 0) return null;
  const bodyRows = Math.max(0, rows - DETAIL_CHROME);
  const fromEnd = anchoredAtEnd(tab);
  if (task === undefined) {
    return (
      <Box height={rows}>
        <Styled dim>No task selected.</Styled>
      </Box>
    );
  }
  const attempt = task.attempt > 0 ? ` · attempt ${task.attempt}/${task.maxAttempts}` : '';
  return (
    <Box flexDirection="column" height={rows} overflow="hidden">
      <Styled wrap="truncate-end">
        <Styled dim>{'── '}</Styled>
        <Styled bold>{singleLine(task.id)}</Styled>
        <Text> </Text>
        <Styled
          color={STATUS_COLOR[task.status]}
        >{`${STATUS_SYMBOL[task.status]} ${task.status}${task.phase === null ? '' : ` (${task.phase})`}`}</Styled>
        {/* The title comes from BACKLOG.md (a TODO, an issue) and the branch from state: both shown sanitised. */}
        <Text>{` · ${singleLine(task.title)} · ${singleLine(task.branch ?? taskBranch(task.id))}${attempt} `}</Text>
        <Styled dim>{'─'.repeat(200)}</Styled>
      </Styled>
      <TabLine tab={tab} position={positionText(lines.length, bodyRows, scroll, fromEnd)} />
      <ScrollView lines={lines} height={bodyRows} offset={scroll} fromEnd={fromEnd} />
    </Box>
  );
}
