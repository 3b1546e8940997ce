import { describe, expect, it } from 'vitest';
import { firstOverlap, plannedFiles } from '../../../src/core/roles/plan-files.js';
import { explorerPrompt } from '../../../src/core/roles/prompts.js';

describe('planned files', () => {
  it('reads the last files block of a plan, normalised', () => {
    const plan = [
      '1. Goal: fix it',
      '```files',
      'old.js',
      '```',
      'On second thought:',
      '```files',
      '- ./src/calc.js',
      '`test/calc.test.js`',
      'src/calc.js',
      '/etc/passwd',
      '../outside.js',
      'docs/',
      '',
      '```',
    ].join('\n');
    expect(plannedFiles(plan)).toEqual(['src/calc.js', 'test/calc.test.js', 'docs/']);
  });

  it('is null for a plan without a files block', () => {
    expect(plannedFiles('1. change src/calc.js\n```js\nx()\n```')).toBeNull();
  });

  it('finds the first overlapping claim, folders included', () => {
    const claims = [
      { id: 'T-1', files: ['README.md'] },
      { id: 'T-2', files: ['src/'] },
      { id: 'T-3', files: ['src/calc.js'] },
    ];
    expect(firstOverlap(['src/calc.js', 'lib/x.js'], claims)).toEqual({ id: 'T-2', files: ['src/calc.js'] });
    expect(firstOverlap(['lib/x.js'], claims)).toBeNull();
    expect(firstOverlap(['src/'], [{ id: 'T-3', files: ['src/calc.js'] }])).toEqual({ id: 'T-3', files: ['src/'] });
  });

  it('is asked for in every explorer prompt', () => {
    const spec = { id: 'T-1', title: 'x', line: 1, done: false, description: '', after: [], files: [] };
    expect(explorerPrompt(spec, 1, 'npm test', null)).toContain('fenced code block tagged `files`');
  });
});
