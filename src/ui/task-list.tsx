import { useEffect, useMemo, useRef, type ReactNode } from 'react';
import { Box, Text } from 'ink';
import type { TaskGates } from '../domain/types.js';
import { liveElapsed, type TaskEntry } from './fleet-reducer.js';
import { padEnd, padStart, truncate } from './format.js';
import { windowStart } from './layout.js';
import type { RowColumns } from './row-columns.js';
import { Styled } from './styled-text.js';
import { TaskRow, waitsForNextRun } from './task-row.js';

/** Column titles; the title column also says where the selection is in a long list (`12/1000`). */
export function TaskListHeader({
  cols,
  position,
  count,
}: {
  cols: RowColumns;
  position: number;
  count: number;
}): ReactNode {
  const title = count > 0 ? `title (${position + 1}/${count})` : 'title';
  return (
    <Styled dim wrap="truncate-end">
      {'  '}
      {padEnd('id', cols.id)}
      {padEnd('status', cols.status)}
      {padEnd(truncate(title, cols.title - 1), cols.title)}
      {cols.phase > 0 && padEnd('phase', cols.phase)}
      {cols.attempt > 0 && padEnd('try', cols.attempt)}
      {cols.tokens > 0 && padEnd(padStart('tokens', 6), cols.tokens)}
      {cols.cost > 0 && padEnd(padStart('cost', 7), cols.cost)}
      {cols.elapsed > 0 && padStart('time', 8)}
    </Styled>
  );
}

export interface TaskListProps {
  order: readonly string[];
  tasks: ReadonlyMap<string, TaskEntry>;
  selectedIndex: number;
  height: number;
  cols: RowColumns;
  gates: TaskGates;
  now: number;
}

/**
 * The visible window of the task list. Only `height` rows are ever rendered, however long the backlog;
 * the window scrolls just enough to keep the selected row in view.
 */
export function TaskList({ order, tasks, selectedIndex, height, cols, gates, now }: TaskListProps): ReactNode {
  const startRef = useRef(0);
  const start = windowStart(startRef.current, Math.max(0, selectedIndex), height, order.length);
  useEffect(() => {
    startRef.current = start;
  });
  const ids = useMemo(() => order.slice(start, start + height), [order, start, height]);

  if (height <= 0) return null;
  if (order.length === 0) {
    return (
      <Box height={height}>
        <Styled dim> No tasks. Press e to add some to BACKLOG.md.</Styled>
      </Box>
    );
  }
  return (
    <Box flexDirection="column" height={height} overflow="hidden">
      {ids.map((id, i) => {
        const entry = tasks.get(id);
        if (entry === undefined) return <Text key={id}> </Text>;
        return (
          <TaskRow
            key={id}
            task={entry.task}
            selected={start + i === selectedIndex}
            elapsedMs={liveElapsed(entry, now)}
            cols={cols}
            gates={gates}
            now={waitsForNextRun(entry.task) ? now : 0}
          />
        );
      })}
    </Box>
  );
}
