import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseBacklog, DEFAULT_CONFIG, DEFAULT_PROTECT } from '../../../src/core/backlog/parse.js';
import type { InputError } from '../../../src/domain/errors.js';
import { backlogRefusal, md } from '../../helpers/backlog-text.js';
import { PACKAGED_BACKLOG } from '../../helpers/paths.js';

const FILE = 'BACKLOG.md';

const problems = (text: string) => backlogRefusal(text, FILE);

/** Asserts exactly one problem at `line` whose message contains `fragment`. */
function expectProblem(text: string, line: number, fragment: string): InputError {
  const errs = problems(text);
  expect(errs.map((e) => `${e.line}: ${e.problem}`)).toHaveLength(1);
  const [e] = errs;
  expect(e!.file).toBe(FILE);
  expect(e!.line).toBe(line);
  expect(e!.problem).toContain(fragment);
  return e!;
}

const DESIGN_EXAMPLE = md(
  '---',
  'base: main                 # branch',
  'concurrency: 3',
  'check: npm test',
  'setup: npm ci',
  'model: claude-sonnet-5-5',
  'review: true',
  'gates:',
  '  attempts: 3',
  '  tokens: 500k',
  '  time: 30m',
  '  cost: 2',
  '  fleet_tokens: 5M',
  '  fleet_cost: 25',
  '  fleet_time: 8h',
  '---',
  '',
  '# Backlog',
  '',
  '- [ ] T-1 Upgrade lodash to v5',
  '  check: npm test -- lodash',
  '- [ ] T-2 Migrate the enzyme tests to testing-library',
  '  attempts: 5',
  '  after: T-1',
  '  The old tests live in test/legacy. Keep every assertion.',
  '- [x] T-3 Remove the unused newCheckout feature flag',
);

describe('front matter', () => {
  it('reads the example of the design document', () => {
    const { backlog, missingIds } = parseBacklog(DESIGN_EXAMPLE, FILE);
    expect(missingIds).toEqual([]);
    expect(backlog.path).toBe(FILE);
    expect(backlog.config).toMatchObject({
      base: 'main',
      concurrency: 3,
      check: 'npm test',
      setup: 'npm ci',
      model: 'claude-sonnet-5-5',
      review: true,
      gates: { attempts: 3, tokens: 500_000, timeMs: 1_800_000, costUsd: 2 },
      fleetGates: { tokens: 5_000_000, costUsd: 25, timeMs: 8 * 3_600_000 },
    });
    expect(backlog.tasks.map((t) => [t.id, t.line, t.done])).toEqual([
      ['T-1', 20, false],
      ['T-2', 22, false],
      ['T-3', 26, true],
    ]);
    expect(backlog.tasks[0]).toMatchObject({
      title: 'Upgrade lodash to v5',
      check: 'npm test -- lodash',
      description: '',
    });
    expect(backlog.tasks[1]).toMatchObject({
      attempts: 5,
      after: ['T-1'],
      description: 'The old tests live in test/legacy. Keep every assertion.',
    });
  });

  it('applies the defaults without front matter', () => {
    const { backlog } = parseBacklog(md('- [ ] T-1 Do it'), FILE);
    expect(backlog.config).toEqual(DEFAULT_CONFIG);
    expect(backlog.config).toMatchObject({
      base: null,
      concurrency: 3,
      check: null,
      model: 'claude-sonnet-5-5',
      review: true,
      gates: { attempts: 3, tokens: 500_000, timeMs: 30 * 60_000, costUsd: null },
      fleetGates: { tokens: null, costUsd: null, timeMs: null },
      ports: { from: 4100, to: 4199 },
      sandbox: 'auto',
      maxFiles: 50,
      maxLines: 2000,
      prices: {},
      checkTimeoutMs: 600_000,
      setupTimeoutMs: 600_000,
    });
    expect(backlog.config.protect).toContain('.github/**');
  });

  it('accepts an empty or comment-only front matter', () => {
    expect(parseBacklog(md('---', '---', '- [ ] T-1 x'), FILE).backlog.config).toEqual(DEFAULT_CONFIG);
    expect(parseBacklog(md('---', '# nothing', '---'), FILE).backlog.tasks).toEqual([]);
  });

  it('reads every other key', () => {
    const { backlog } = parseBacklog(
      md(
        '---',
        'ports: 5000-5009',
        'notify: ./notify.sh',
        'sandbox: false',
        'max_files: 10',
        'max_lines: 1.5k',
        'protect:',
        '  - secrets/**',
        '  - "!yarn.lock"',
        'prices:',
        '  local-model:',
        '    input: 1',
        '    output: $5',
        '    cache_read: 0.05',
        'check_timeout: 90s',
        'setup_timeout: 1h',
        'base: 2024',
        'gates:',
        '  tokens: none',
        '---',
      ),
      FILE,
    );
    expect(backlog.config).toMatchObject({
      ports: { from: 5000, to: 5009 },
      notify: './notify.sh',
      sandbox: 'off',
      maxFiles: 10,
      maxLines: 1500,
      protect: [...DEFAULT_PROTECT, 'secrets/**', '!yarn.lock'],
      prices: { 'local-model': { input: 1, output: 5, cacheRead: 0.05, cacheWrite5m: 1.25, cacheWrite1h: 2 } },
      checkTimeoutMs: 90_000,
      setupTimeoutMs: 3_600_000,
      base: '2024',
      gates: { tokens: null },
    });
    expect(parseBacklog(md('---', 'sandbox: true', '---'), FILE).backlog.config.sandbox).toBe('auto');
  });

  it('names an unknown key with its line and the closest known one', () => {
    expectProblem(
      md('---', 'concurrency: 2', 'concurency: 3', '---'),
      3,
      "unknown key 'concurency' (did you mean 'concurrency'?)",
    );
    expectProblem(md('---', 'colour: red', '---'), 2, "unknown key 'colour'");
    expectProblem(md('---', 'tokens: 5k', '---'), 2, 'put it under gates:');
  });

  it('names an unknown gate with its line', () => {
    const e = expectProblem(md('---', 'gates:', '  attempts: 2', '  token: 5k', '---'), 4, "unknown gate 'token'");
    expect(e.problem).toContain("did you mean 'tokens'?");
  });

  it.each([
    ['concurrency: 0', 'concurrency must be a whole number of at least 1'],
    ['concurrency: two', "got 'two'"],
    ['parallel: 0', 'parallel must be a whole number of at least 1'],
    ['parallel: 6', "parallel must be at most 5 (candidates per attempt round), got '6'"],
    ['parallel: x', "got 'x'"],
    ['review: maybe', 'review must be true or false'],
    ['ports: 4199-4100', 'reversed'],
    ['ports: 80-70000', 'outside 1-65535'],
    ['ports: lots', 'ports must be a range like 4100-4199'],
    ['ports: 4100-4101', 'fewer than concurrency 3'],
    ['sandbox: maybe', 'sandbox must be auto or off'],
    ['check_timeout: soon', "check_timeout: malformed duration 'soon'"],
    ['model:', 'model needs a model name'],
    ['max_files: -3', 'max_files must be a whole number'],
    ['protect: [1]', 'protect must be a list of path patterns'],
    ['check: {run: x}', 'check must be a command or a list of commands'],
    ['check: [npm test, {run: lint, required: maybe}]', 'check: required must be true or false'],
    ['gates: 5', 'gates must be a mapping'],
    ['prices: {m: {input: 1}}', 'prices.m needs both input and output'],
    ['prices: {m: {input: 1, output: 2, cached: 1}}', "unknown price 'cached'"],
  ])('refuses %j on its line', (line, fragment) => {
    expectProblem(md('---', line, '---'), 2, fragment);
  });

  it.each([
    ['attempts: -1', 'gates.attempts must be a whole number of at least 1'],
    ['attempts: 0', 'at least 1'],
    ['attempts: 2.5', 'at least 1'],
    ['tokens: 5Q', "gates.tokens: malformed size '5Q': use a number with an optional k or M suffix"],
    ['tokens: 0', 'greater than zero'],
    ['time: 30x', "gates.time: malformed duration '30x'"],
    ['cost: free', "gates.cost: malformed amount 'free'"],
    ['fleet_cost: -2', "malformed amount '-2'"],
  ])('refuses the gate %j on its line', (line, fragment) => {
    expectProblem(md('---', 'concurrency: 1', 'gates:', `  ${line}`, '---'), 4, fragment);
  });

  it('reports YAML syntax errors at the real file line', () => {
    const e = expectProblem(
      md('---', 'base: main', 'check: "npm test', '---', '- [ ] T-1 x'),
      3,
      'front matter is not valid YAML',
    );
    expect(e.message).toMatch(/^BACKLOG\.md:3: /);
    expectProblem(md('---', 'base: main', 'base: dev', '---'), 3, 'a key appears twice');
  });

  it('refuses front matter that is not a mapping', () => {
    expectProblem(md('---', '- a', '- b', '---'), 2, 'front matter must be a YAML mapping');
    expectProblem(md('---', 'just words', '---'), 2, 'front matter must be a YAML mapping');
  });

  it('refuses unterminated front matter', () => {
    expectProblem(md('---', 'base: main', '', '- [ ] T-1 x'), 1, 'unterminated front matter');
  });

  it('lists every problem at once, in line order', () => {
    const errs = problems(
      md(
        '---',
        'concurency: 3',
        'gates:',
        '  token: 5k',
        '---',
        '- [ ] T-1 a',
        '  tokens: lots',
        '- [ ] T-1 b',
        '  after: T-9',
      ),
    );
    expect(errs.map((e) => e.line)).toEqual([2, 4, 7, 8, 9]);
  });
});

describe('tasks', () => {
  it('recognises item forms and ignores nested, fenced and commented items', () => {
    const { backlog } = parseBacklog(
      md(
        'Intro text.',
        '- [ ] A-1 dash',
        '* [x] B-22 star',
        '- [X] C3-4 capital X',
        '+ [ ] D-5 plus',
        '  - [ ] E-6 nested: description',
        '- plain list item',
        '- [] F-7 not a checkbox',
        '- [ ]G-8 no space',
        '```',
        '- [ ] H-9 fenced',
        '```',
        '~~~~md',
        '- [ ] H-10 fenced with tildes',
        '```',
        '~~~~',
        '<!--',
        '- [ ] I-11 commented',
        '-->',
        '<!-- - [ ] I-12 inline comment -->',
        '- [ ] J-13 after comments <!-- note -->',
      ),
      FILE,
    );
    expect(backlog.tasks.map((t) => [t.id, t.title, t.done])).toEqual([
      ['A-1', 'dash', false],
      ['B-22', 'star', true],
      ['C3-4', 'capital X', true],
      ['D-5', 'plus', false],
      ['J-13', 'after comments', false],
    ]);
    expect(backlog.tasks[3]!.description).toBe('- [ ] E-6 nested: description');
  });

  it('assigns the next free T ids in file order and reports them', () => {
    const { backlog, missingIds } = parseBacklog(
      md(
        '- [ ] First thing',
        '- [ ] T-7 Seven',
        '- [x] done thing',
        '- [ ] ABC-99 other scheme',
        '- [ ] t-3 lower case is a title',
      ),
      FILE,
    );
    expect(backlog.tasks.map((t) => t.id)).toEqual(['T-8', 'T-7', 'T-9', 'ABC-99', 'T-10']);
    expect(missingIds).toEqual([
      { line: 1, id: 'T-8', title: 'First thing' },
      { line: 3, id: 'T-9', title: 'done thing' },
      { line: 5, id: 'T-10', title: 't-3 lower case is a title' },
    ]);
  });

  it('starts at T-1 and accepts an id followed by a colon', () => {
    const { backlog, missingIds } = parseBacklog(md('- [ ] T-1: Colon style', '- [ ] New'), FILE);
    expect(backlog.tasks.map((t) => [t.id, t.title])).toEqual([
      ['T-1', 'Colon style'],
      ['T-2', 'New'],
    ]);
    expect(missingIds).toHaveLength(1);
  });

  it('reads fields and a dedented description; unknown keys and sub-lists are prose', () => {
    const { backlog } = parseBacklog(
      md(
        '- [ ] T-1 Everything',
        '  check: npm test -- a',
        '  setup: make deps',
        '  attempts: 4',
        '  tokens: 1.5M',
        '  time: 1h30m',
        '  cost: $2.50',
        '  model: claude-opus-5-5',
        '  after: T-2, T-3 T-4',
        '  files: src/a.ts, src/b/**, docs/with space.md',
        '  review: False',
        '  Note: keep the API.',
        '',
        '  Steps:',
        '    - first',
        '    - second',
        '  ```',
        '  check: inside a fence is prose',
        '  ```',
        '',
        'Paragraph that ends the item.',
        '  indented but orphaned',
        '- [ ] T-2 Two',
        '- [ ] T-3 Three',
        '- [x] T-4 Four',
      ),
      FILE,
    );
    const t = backlog.tasks[0]!;
    expect(t).toMatchObject({
      check: 'npm test -- a',
      setup: 'make deps',
      attempts: 4,
      tokens: 1_500_000,
      timeMs: 5_400_000,
      costUsd: 2.5,
      model: 'claude-opus-5-5',
      after: ['T-2', 'T-3', 'T-4'],
      files: ['src/a.ts', 'src/b/**', 'docs/with space.md'],
      review: false,
    });
    expect(t.description).toBe(
      [
        'Note: keep the API.',
        '',
        'Steps:',
        '  - first',
        '  - second',
        '```',
        'check: inside a fence is prose',
        '```',
      ].join('\n'),
    );
    expect(backlog.tasks[1]).toMatchObject({ description: '', after: [], files: [] });
    expect(backlog.tasks[1]!.check).toBeUndefined();
  });

  it('reads a field without a space after the colon, tab indentation, and fences inside an item', () => {
    const { backlog } = parseBacklog(
      md(
        '- [ ] T-1 a',
        '\tafter:T-2',
        '\tTabbed prose.',
        '  ```',
        '- [ ] T-9 inside the item fence',
        '  ```',
        '- [ ] T-2 b',
      ),
      FILE,
    );
    expect(backlog.tasks.map((t) => t.id)).toEqual(['T-1', 'T-2']);
    expect(backlog.tasks[0]).toMatchObject({ after: ['T-2'] });
    expect(backlog.tasks[0]!.description).toContain('- [ ] T-9 inside the item fence');
  });

  it('parses CRLF files like LF files', () => {
    const crlf = DESIGN_EXAMPLE.replace(/\n/g, '\r\n');
    expect(parseBacklog(crlf, FILE)).toEqual(parseBacklog(DESIGN_EXAMPLE, FILE));
  });

  it('refuses two ids with one number (T-007 and T-7) at the later line, naming the first', () => {
    expectProblem(
      md('- [ ] T-7 a', '- [ ] T-007 b'),
      2,
      'task id T-007 names the same task as T-7 on line 1 (ids are compared by their number)',
    );
    expectProblem(md('- [ ] FOO-010 a', '', '- [ ] FOO-10 b'), 3, 'FOO-10 names the same task as FOO-010 on line 1');
  });

  it('reads ids as whole numbers of any size: neighbours past 2^53 are two tasks, and a new id follows them', () => {
    const { backlog, missingIds } = parseBacklog(
      md('- [ ] T-12345678901234567 a', '- [ ] T-12345678901234568 b', '- [ ] c'),
      FILE,
    );
    expect(backlog.tasks.map((t) => t.id)).toEqual([
      'T-12345678901234567',
      'T-12345678901234568',
      'T-12345678901234569',
    ]);
    expect(missingIds.map((m) => m.id)).toEqual(['T-12345678901234569']);
    const taken = parseBacklog(md('- [ ] d'), FILE, { takenIds: ['T-99999999999999999999'] });
    expect(taken.backlog.tasks[0]!.id).toBe('T-100000000000000000000');
  });

  it('refuses duplicate ids, naming both lines', () => {
    expectProblem(md('- [ ] T-1 a', '', '- [x] T-1 b'), 3, 'duplicate task id T-1: lines 1 and 3');
  });

  it('refuses after: naming no task', () => {
    expectProblem(md('- [ ] T-1 a', '  after: T-9'), 2, 'after: T-9 names no task');
    expectProblem(md('- [ ] T-1 a', '  after: soon'), 2, "after: 'soon' is not a task id");
  });

  it('accepts after: naming an assigned id', () => {
    const { backlog } = parseBacklog(md('- [ ] New', '- [ ] T-1 a', '  after: T-2'), FILE);
    expect(backlog.tasks.map((t) => t.id)).toEqual(['T-2', 'T-1']);
  });

  it('refuses after: cycles, once each', () => {
    expectProblem(
      md('- [ ] T-1 a', '  after: T-3', '- [ ] T-2 b', '  after: T-1', '- [ ] T-3 c', '  after: T-2'),
      2,
      'after: cycle T-1 → T-3 → T-2 → T-1',
    );
    expectProblem(md('- [ ] T-1 a', '  after: T-1'), 2, 'after: cycle T-1 → T-1');
  });

  it.each([
    ['attempts: -1', "attempts: must be a positive whole number, got '-1'"],
    ['attempts: 0', 'positive whole number'],
    ['attempts: 2.5', 'positive whole number'],
    ['tokens: 5Q', "tokens: malformed size '5Q'"],
    ['tokens: 0', 'greater than zero'],
    ['time: 30 minutes', "time: malformed duration '30 minutes'"],
    ['cost: free', "cost: malformed amount 'free'"],
    ['review: yes', 'review: must be true or false'],
    ['check:', 'check: needs a value'],
    ['files: ,', 'files: needs at least one path'],
    ['parallel: 0', "parallel: must be a whole number from 1 to 5 (candidates per attempt round), got '0'"],
    ['parallel: 9', "parallel: must be a whole number from 1 to 5 (candidates per attempt round), got '9'"],
    ['parallel: x', "got 'x'"],
    ['parallel: 2.5', "got '2.5'"],
  ])('refuses the field %j on its line', (field, fragment) => {
    expectProblem(md('# Backlog', '- [ ] T-1 a', `  ${field}`), 3, fragment);
  });

  it('reads parallel: from a task, over the front matter default, and gives it to parts', () => {
    const { backlog } = parseBacklog(
      md('---', 'parallel: 2', '---', '- [ ] T-1 a', '  parallel: 3', '- [ ] T-1.1 part', '- [ ] T-2 b'),
      FILE,
    );
    expect(backlog.config.parallel).toBe(2);
    expect(backlog.tasks.map((t) => [t.id, t.parallel])).toEqual([
      ['T-1', 3],
      ['T-1.1', 3],
      ['T-2', undefined],
    ]);
    expect(DEFAULT_CONFIG.parallel).toBe(1);
  });

  it('refuses a field set twice and an item without a title', () => {
    expectProblem(md('- [ ] T-1 a', '  check: a', '  check: b'), 3, 'check: set twice for this task (first on line 2)');
    expectProblem(md('- [ ] T-4', '- [ ] T-5 fine'), 1, 'task T-4 has no title');
    expect(problems(md('- [ ] T-4', '- [ ] ')).map((e) => e.line)).toEqual([1, 2]);
  });

  it('accepts the init template with no tasks', () => {
    const text = readFileSync(join(PACKAGED_BACKLOG, 'init-template.md'), 'utf8');
    const { backlog, missingIds } = parseBacklog(text, FILE);
    expect(backlog.tasks).toEqual([]);
    expect(missingIds).toEqual([]);
    expect(backlog.config).toEqual(DEFAULT_CONFIG);
  });

  it('documents every front matter key in the init template, in working syntax', () => {
    const text = readFileSync(join(PACKAGED_BACKLOG, 'init-template.md'), 'utf8');
    const uncommented = text.replace(/^# ( *(?:[a-z][a-z0-9_-]*:|- ))/gm, '$1');
    const { config } = parseBacklog(uncommented, FILE).backlog;
    expect(config).toMatchObject({
      base: 'main',
      check: 'npm test',
      setup: 'npm ci',
      notify: './notify.sh',
      gates: { attempts: 3, tokens: 500_000, timeMs: 1_800_000, costUsd: 2 },
      fleetGates: { tokens: 5_000_000, costUsd: 25, timeMs: 8 * 3_600_000 },
      protect: [...DEFAULT_PROTECT, 'secrets/**'],
    });
    expect(Object.keys(config.prices)).toEqual(['my-local-model']);
  });

  it('runs the init template examples once they leave the comment', () => {
    const text = readFileSync(join(PACKAGED_BACKLOG, 'init-template.md'), 'utf8');
    const { backlog } = parseBacklog(text.replace('<!--', '').replace('-->', ''), FILE);
    expect(backlog.tasks.map((t) => t.id)).toEqual(['T-1', 'T-2']);
    expect(backlog.tasks[1]).toMatchObject({ attempts: 5, timeMs: 3_600_000 });
  });
});

describe('new ids and ids used before', () => {
  it('never hands out an id that state still remembers', () => {
    const text = '- [ ] T-1 Kept\n- [ ] New one\n';
    expect(parseBacklog(text, 'BACKLOG.md').missingIds.map((m) => m.id)).toEqual(['T-2']);
    expect(parseBacklog(text, 'BACKLOG.md', { takenIds: ['T-1', 'T-2', 'T-7'] }).missingIds.map((m) => m.id)).toEqual([
      'T-8',
    ]);
  });
});

describe('the bundled backlogs', () => {
  it('all parse: the examples, the demo and the init template', async () => {
    const { readdirSync } = await import('node:fs');
    const root = new URL('../../../backlog/', import.meta.url);
    const files = [
      ...readdirSync(new URL('examples/', root)).map((f) => new URL(`examples/${f}`, root)),
      new URL('demo-repo/BACKLOG.md', root),
      new URL('init-template.md', root),
    ];
    for (const file of files) {
      const parsed = parseBacklog(readFileSync(file, 'utf8'), file.pathname);
      expect(parsed.backlog.tasks.length, file.pathname).toBeGreaterThanOrEqual(
        file.pathname.endsWith('init-template.md') ? 0 : 3,
      );
    }
  });
});
