import { memo, type ReactNode } from 'react';
import { Box, Text } from 'ink';
import type { StyledLine } from './styled-text.js';
import { scrollStart } from './layout.js';
import { Styled } from './styled-text.js';

export interface ScrollViewProps {
  lines: readonly StyledLine[];
  height: number;
  /** lines away from the anchor */
  offset: number;
  /** anchored at the end: offset 0 shows the newest lines and follows them as they arrive */
  fromEnd: boolean;
}

/** Exactly `height` terminal lines of `lines`, never wrapping (lines come pre-wrapped to the width). */
export const ScrollView = memo(function ScrollView({ lines, height, offset, fromEnd }: ScrollViewProps): ReactNode {
  if (height <= 0) return null;
  const start = scrollStart(lines.length, height, offset, fromEnd);
  const visible = lines.slice(start, start + height);
  return (
    <Box flexDirection="column" height={height} overflow="hidden">
      {visible.map((line, i) => (
        <Styled key={start + i} wrap="truncate-end" color={line.color} bold={line.bold} dim={line.dim}>
          {line.text === '' ? ' ' : line.text}
        </Styled>
      ))}
      {visible.length === 0 && <Text> </Text>}
    </Box>
  );
});

/** `12–31 of 120`, or '' when everything fits. */
export function positionText(lineCount: number, height: number, offset: number, fromEnd: boolean): string {
  if (lineCount <= height) return '';
  const start = scrollStart(lineCount, height, offset, fromEnd);
  return `${start + 1}–${Math.min(lineCount, start + height)} of ${lineCount}`;
}
