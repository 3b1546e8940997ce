import type { ReactNode } from 'react';
import type { Notice } from './fleet-reducer.js';
import { singleLine } from './format.js';
import { Styled } from './styled-text.js';
import type { PendingConfirm, StatusMessage } from './view-state.js';

export interface StatusLineProps {
  confirm: PendingConfirm | null;
  status: StatusMessage | null;
  notice: Notice | null;
}

/**
 * One line: a pending question first, else the answer to the last key, else the engine's latest
 * warning. Errors are marked with `✗` so they read without colour. Each text may quote an agent (a title, a
 * reason, a log line), so it is shown through the one sanitiser, on one line.
 */
export function StatusLine({ confirm, status, notice }: StatusLineProps): ReactNode {
  if (confirm !== null) {
    return (
      <Styled color="yellow" bold wrap="truncate-end">
        {`? ${singleLine(confirm.prompt)}`}
      </Styled>
    );
  }
  if (status !== null) {
    const error = status.level === 'error';
    return (
      <Styled color={error ? 'red' : undefined} wrap="truncate-end">
        {`${error ? '✗ ' : ''}${singleLine(status.text)}`}
      </Styled>
    );
  }
  if (notice !== null) {
    if (notice.level === 'info') return <Styled wrap="truncate-end">{singleLine(notice.text)}</Styled>;
    return (
      <Styled color={notice.level === 'error' ? 'red' : 'yellow'} wrap="truncate-end">
        {`${notice.level === 'error' ? '✗' : '⚠'} ${singleLine(notice.text)}`}
      </Styled>
    );
  }
  return <Styled dim> </Styled>;
}
