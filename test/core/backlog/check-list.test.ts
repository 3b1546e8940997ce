import { describe, expect, it } from 'vitest';
import { parseBacklog } from '../../../src/core/backlog/parse.js';
import { checksOf } from '../../../src/core/verify/checks.js';
import { backlogProblems, md } from '../../helpers/backlog-text.js';

const FILE = '/repo/BACKLOG.md';

const problems = (text: string) => backlogProblems(text, FILE);

describe('check: as a list', () => {
  it('reads a flow list in the front matter: each entry named by its command, required, in order', () => {
    const { backlog } = parseBacklog(
      md('---', 'check: [npm test, npm run lint, tsc --noEmit]', '---', '- [ ] T-1 One'),
      FILE,
    );
    expect(backlog.config.checks).toEqual([
      { name: 'npm test', run: 'npm test', required: true },
      { name: 'npm run lint', run: 'npm run lint', required: true },
      { name: 'tsc --noEmit', run: 'tsc --noEmit', required: true },
    ]);
    // Readers of the single string see every command that decides a task.
    expect(backlog.config.check).toBe('npm test && npm run lint && tsc --noEmit');
    expect(checksOf(backlog.tasks[0]!, backlog.config)).toHaveLength(3);
  });

  it('reads { name, run, required } entries; the single string holds only the required ones', () => {
    const { backlog } = parseBacklog(
      md(
        '---',
        'check:',
        '  - npm test',
        '  - { name: lint, run: npm run lint, required: false }',
        '  - name: types',
        '    run: tsc --noEmit',
        '---',
        '- [ ] T-1 One',
      ),
      FILE,
    );
    expect(backlog.config.checks).toEqual([
      { name: 'npm test', run: 'npm test', required: true },
      { name: 'lint', run: 'npm run lint', required: false },
      { name: 'types', run: 'tsc --noEmit', required: true },
    ]);
    expect(backlog.config.check).toBe('npm test && tsc --noEmit');
  });

  it('keeps a plain string exactly as before, in the front matter and per task', () => {
    const { backlog } = parseBacklog(
      md('---', 'check: npm test', '---', '- [ ] T-1 One', '  check: [ -f done.txt ]', '- [ ] T-2 Two'),
      FILE,
    );
    expect(backlog.config.check).toBe('npm test');
    expect(backlog.config.checks).toBeUndefined();
    expect(backlog.tasks[0]!.check).toBe('[ -f done.txt ]');
    expect(checksOf(backlog.tasks[0]!, backlog.config)).toEqual([
      { name: '[ -f done.txt ]', run: '[ -f done.txt ]', required: true },
    ]);
    expect(checksOf(backlog.tasks[1]!, backlog.config)).toEqual([
      { name: 'npm test', run: 'npm test', required: true },
    ]);
  });

  it('reads a per-task flow list, which wins over the front matter', () => {
    const { backlog } = parseBacklog(
      md(
        '---',
        'check: npm test',
        '---',
        '- [ ] T-1 One',
        '  check: [npm test, {name: lint, run: npm run lint, required: false}]',
      ),
      FILE,
    );
    const t = backlog.tasks[0]!;
    expect(t.checks).toEqual([
      { name: 'npm test', run: 'npm test', required: true },
      { name: 'lint', run: 'npm run lint', required: false },
    ]);
    expect(t.check).toBe('npm test');
    expect(checksOf(t, backlog.config).map((c) => c.name)).toEqual(['npm test', 'lint']);
  });

  it.each([
    [md('---', 'check: []', '---'), 2, 'the list is empty'],
    [md('---', 'check: [npm test, {name: npm test, run: npm run test2}]', '---'), 2, "two checks are named 'npm test'"],
    [md('---', 'check: [{run: a, required: false}]', '---'), 2, 'every check is required: false'],
    [md('---', 'check:', '  - npm test', '  - {name: lint}', '---'), 4, "the entry 'lint' needs run: <command>"],
    [md('---', 'check:', '  - npm test', '  - {run: x, needed: true}', '---'), 4, "unknown key 'needed'"],
    [md('---', 'check:', '  - npm test', '  - [a, b]', '---'), 4, 'each entry is a command or a mapping'],
    [
      md('---', '---', '- [ ] T-1 One', '  check: [npm test, {run: lint, required: perhaps}]'),
      4,
      'required must be true or false',
    ],
    [md('---', '---', '- [ ] T-1 One', '', '  check: [npm test, npm run lint'), 5, 'is not a valid list'],
  ])('refuses a bad list with its file line (%#)', (text, line, fragment) => {
    const errs = problems(text);
    expect(errs).toHaveLength(1);
    expect(errs[0]!.file).toBe(FILE);
    expect(errs[0]!.line).toBe(line);
    expect(errs[0]!.problem).toContain(fragment);
  });
});

describe('prove: and tests:', () => {
  it('reads prove: in the front matter and per task, and tests: globs', () => {
    const { backlog } = parseBacklog(
      md(
        '---',
        'prove: true',
        'tests:',
        '  - spec/**',
        '  - "*.check.js"',
        '---',
        '- [ ] T-1 One',
        '  prove: false',
        '- [ ] T-2 Two',
      ),
      FILE,
    );
    expect(backlog.config.prove).toBe(true);
    expect(backlog.config.tests).toEqual(['spec/**', '*.check.js']);
    expect(backlog.tasks[0]!.prove).toBe(false);
    expect(backlog.tasks[1]!.prove).toBeUndefined();
  });

  it('refuses a prove: that is not a boolean, on its line', () => {
    expect(problems(md('---', 'prove: sometimes', '---')).map((e) => [e.line, e.problem])).toEqual([
      [2, "prove must be true or false, got 'sometimes'"],
    ]);
    expect(problems(md('---', '---', '- [ ] T-1 One', '  prove: yes')).map((e) => [e.line, e.problem])).toEqual([
      [4, "prove: must be true or false, got 'yes'"],
    ]);
    expect(problems(md('---', 'tests: [1]', '---')).map((e) => e.problem)).toEqual([
      'tests must be a list of path patterns, e.g. - e2e/**',
    ]);
  });
});
