import { byRole } from '../../src/demo/script-kit.js';
import type { Script } from '../../src/demo/script-types.js';
import { backlog } from './fleet-harness.js';

/**
 * Agent text that tries to drive the person's terminal: OSC 52 (writes the clipboard), OSC 0 (the window
 * title), an OSC 8 hyperlink, `ESC[2J` (clears the screen), their 8-bit C1 forms and bidi controls.
 */
export const HOSTILE =
  '\u001b]52;c;cHduZWQ=\u0007\u001b]0;PWNED\u0007\u001b]8;;https://evil.example/\u001b\\click\u001b]8;;\u001b\\\u001b[2J' +
  '\u009b2J\u009d0;PWNED8\u009c\u202eevil\u2066';

/** A byte a terminal or viewer acts on: C0 but tab and newline, DEL, C1, bidi controls. */
export const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

export function unsafeAt(text: string): string | null {
  const m = UNSAFE.exec(text);
  return m === null ? null : JSON.stringify(text.slice(Math.max(0, m.index - 40), m.index + 40));
}

/** The explorer plans with it, the implementer writes it where the check prints it and proposes it as a lesson, the reviewer vetoes T-2 with it. */
export const hostileScript: Script = byRole({
  explorer: (req) => ({ text: `## Plan for ${req.taskId}\n\n1. Write ok.txt ${HOSTILE}` }),
  implementer: (req) =>
    req.assistantTurns === 0
      ? {
          text: 'Writing.',
          toolUses: [
            { name: 'write', input: { file_path: 'ok.txt', content: 'ok\n' } },
            { name: 'write', input: { file_path: 'out.txt', content: `${HOSTILE}\nsecond line ${HOSTILE}\n` } },
          ],
        }
      : { text: `Done.\nLESSON: ${req.taskId} says ${HOSTILE}` },
  verifier: (req) => ({
    text: JSON.stringify(
      req.taskId === 'T-2'
        ? { pass: false, reasons: [`bad\n12:00:00 T-2 verified ${HOSTILE}`] }
        : { pass: true, reasons: [`fine ${HOSTILE}`] },
    ),
  }),
});

export const HOSTILE_BACKLOG = (notify: string) =>
  backlog(
    `check: sh check.sh\nreview: true\nconcurrency: 1\nnotify: ${notify}\ngates:\n  attempts: 1`,
    // T-2's title as discover took it from a GitHub issue before proposals were sanitised.
    `- [ ] T-1 Say hello\n- [ ] T-2 GitHub #7: Get vetoed ${HOSTILE}`,
  );
