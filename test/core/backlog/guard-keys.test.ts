import { describe, expect, it } from 'vitest';
import { parseBacklog } from '../../../src/core/backlog/parse.js';
import { InputErrors } from '../../../src/domain/errors.js';
import { md } from '../../helpers/backlog-text.js';

function problems(text: string): string[] {
  try {
    parseBacklog(text, 'BACKLOG.md');
    return [];
  } catch (error) {
    if (!(error instanceof InputErrors)) throw error;
    return error.errors.map((e) => `${e.line}: ${e.problem}`);
  }
}

describe('guard keys of the front matter', () => {
  it('default to 5 MB per file, 10 MB per diff and no extra test patterns', () => {
    expect(parseBacklog(md('- [ ] T-1 x'), 'BACKLOG.md').backlog.config).toMatchObject({
      maxFileBytes: 5_000_000,
      maxBytes: 10_000_000,
      tests: [],
    });
  });

  it('read sizes with k/M suffixes and a list of test patterns', () => {
    const { config } = parseBacklog(
      md('---', 'max_file_bytes: 500k', 'max_bytes: 1.5M', 'tests:', '  - e2e/**', '  - "*.check.js"', '---'),
      'BACKLOG.md',
    ).backlog;
    expect(config).toMatchObject({ maxFileBytes: 500_000, maxBytes: 1_500_000, tests: ['e2e/**', '*.check.js'] });
    expect(parseBacklog(md('---', 'tests: qa/**', '---'), 'BACKLOG.md').backlog.config.tests).toEqual(['qa/**']);
  });

  it('refuse bad values with their line', () => {
    expect(problems(md('---', 'max_file_bytes: 5 MB', '---'))).toEqual([
      "2: max_file_bytes must be a whole number of at least 1, got '5 MB'",
    ]);
    expect(problems(md('---', 'concurrency: 1', 'tests:', '  - 3', '---'))).toEqual([
      '4: tests must be a list of path patterns, e.g. - e2e/**',
    ]);
    expect(problems(md('---', 'max_byte: 1M', '---'))[0]).toMatch(
      /unknown key 'max_byte' \(did you mean 'max_bytes'\?\)/,
    );
  });
});
