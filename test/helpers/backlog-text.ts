import { parseBacklog } from '../../src/core/backlog/parse.js';
import { InputErrors, type InputError } from '../../src/domain/errors.js';

/** BACKLOG.md text from its lines, ending in a newline. */
export const md = (...lines: string[]): string => `${lines.join('\n')}\n`;

/** What parseBacklog refuses in `text`, each with its file and line; [] when it takes the text. */
export function backlogProblems(text: string, file: string): InputError[] {
  try {
    parseBacklog(text, file);
  } catch (error) {
    if (error instanceof InputErrors) return error.errors;
    throw error;
  }
  return [];
}

/** What parseBacklog refuses in `text`; a backlog it takes fails the test. */
export function backlogRefusal(text: string, file: string): InputError[] {
  const errors = backlogProblems(text, file);
  if (errors.length === 0) throw new Error('expected the backlog to be refused');
  return errors;
}
