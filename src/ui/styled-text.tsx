import { createContext, useContext, type ReactNode } from 'react';
import { Text } from 'ink';
import type { ColorName } from './theme.js';

/** Whether colours and text attributes may be used. When false, not a single ANSI style code is emitted. */
export const ColorContext = createContext<boolean>(true);

export function useColor(): boolean {
  return useContext(ColorContext);
}

/** One terminal line of the detail pane, already wrapped to the pane's width. */
export interface StyledLine {
  readonly text: string;
  readonly color?: ColorName;
  readonly bold?: boolean;
  readonly dim?: boolean;
}

export interface StyleProps {
  color?: ColorName | undefined;
  bold?: boolean | undefined;
  dim?: boolean | undefined;
  inverse?: boolean | undefined;
}

export interface StyledProps extends StyleProps {
  children?: ReactNode;
  wrap?: 'wrap' | 'truncate-end' | 'truncate' | undefined;
}

/**
 * Ink's `Text`, except that every style is dropped when colour is off. Components use this instead of
 * `Text` whenever they style something, so `--no-color` / `NO_COLOR` holds everywhere.
 */
export function Styled({ children, color, bold, dim, inverse, wrap }: StyledProps): ReactNode {
  const colored = useColor();
  if (!colored) return <Text wrap={wrap}>{children}</Text>;
  return (
    <Text wrap={wrap} color={color} bold={bold} dimColor={dim} inverse={inverse}>
      {children}
    </Text>
  );
}
