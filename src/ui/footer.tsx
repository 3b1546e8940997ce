import { memo, type ReactNode } from 'react';
import { Text } from 'ink';
import { COMMAND_SHORT, FOOTER_COMMANDS, KEY_BINDINGS, formatBinding, type InputMode } from './key-bindings.js';
import { Styled } from './styled-text.js';

/** The main keys of the current mode, from the key-binding table: `↑ up  ↓ down  Enter detail …`. */
export const Footer = memo(function Footer({ mode }: { mode: InputMode }): ReactNode {
  return (
    <Text wrap="truncate-end">
      {FOOTER_COMMANDS[mode].map((command) => {
        const binding = KEY_BINDINGS[command][0];
        if (binding === undefined) return null;
        return (
          <Text key={command}>
            <Styled bold>{formatBinding(binding)}</Styled>
            <Styled dim>{` ${COMMAND_SHORT[command]}  `}</Styled>
          </Text>
        );
      })}
    </Text>
  );
});
