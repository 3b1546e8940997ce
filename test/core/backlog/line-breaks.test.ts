import { describe, expect, it } from 'vitest';
import { parseBacklog } from '../../../src/core/backlog/parse.js';
import { InputErrors } from '../../../src/domain/errors.js';

const FILE = '/repo/BACKLOG.md';

function errorsOf(text: string): string[] {
  try {
    parseBacklog(text, FILE);
  } catch (e) {
    if (e instanceof InputErrors) return e.errors.map((x) => x.message);
    throw e;
  }
  throw new Error('parsed without an error');
}

// A lone CR, U+2028 or U+2029 is a line break to JavaScript's `.` but not to a `\n` splitter: the task
// line around it used to match nothing and vanish, and an `after:` naming it failed far from the cause.
describe('a line holding a break character that is not a line break', () => {
  for (const [char, name] of [
    ['\r', 'a lone carriage return (U+000D)'],
    ['\u2028', 'a line separator (U+2028)'],
    ['\u2029', 'a paragraph separator (U+2029)'],
  ] as const) {
    it(`is an error naming its line: ${name}`, () => {
      const text = [
        '---',
        'check: npm test',
        '---',
        '',
        '- [ ] T-1 First',
        `- [ ] T-2 Second${char}half`,
        '- [ ] T-3 Third',
        '  after: T-2',
        '',
      ].join('\n');
      const errors = errorsOf(text);
      expect(errors[0]).toBe(`${FILE}:6: line contains ${name}; replace it with a space or a real line break`);
      expect(errors).toHaveLength(1);
    });
  }

  it('finds it in the front matter and in a task body too, each with its own line', () => {
    const text = ['---', 'check: npm\u2028test', '---', '- [ ] T-1 First', '  files: a.ts\rb.ts', ''].join('\n');
    expect(errorsOf(text)).toEqual([
      `${FILE}:2: line contains a line separator (U+2028); replace it with a space or a real line break`,
      `${FILE}:5: line contains a lone carriage return (U+000D); replace it with a space or a real line break`,
    ]);
  });

  it('leaves CRLF line endings alone', () => {
    const { backlog } = parseBacklog(
      ['---', 'check: npm test', '---', '- [ ] T-1 First', '- [ ] T-2 Second', ''].join('\r\n'),
      FILE,
    );
    expect(backlog.tasks.map((t) => t.title)).toEqual(['First', 'Second']);
  });
});
