import { describe, expect, it } from 'vitest';
import { depProposals, jsonIn, npmError, parseAudit, parseOutdated } from '../../../src/core/discover/deps.js';
import { lintCommands, lintFindings } from '../../../src/core/discover/lint.js';
import { byPriority, knownItems, splitNew, type Proposal } from '../../../src/core/discover/proposal.js';
import { failingTestFiles, narrowedCheck, testRunnerOf } from '../../../src/core/discover/tests.js';
import { enclosingDefinition, findTodos, isScannable, todoProposal } from '../../../src/core/discover/todo.js';
import type { TaskSpec } from '../../../src/domain/types.js';
import { fixture } from '../../helpers/discover-fixture.js';

describe('TODO comments', () => {
  it('finds the four keywords after a comment marker in many languages, not in prose or identifiers', () => {
    const text = [
      '// TODO: js line', //                          1
      '# FIXME python or shell', //                   2
      '/* HACK: block */', //                         3
      ' * XXX inside a block comment', //             4
      '-- TODO(sam): sql or lua', //                  5
      '<!-- TODO: html -->', //                       6
      'const todoList = []; const s = "TODO not a comment";', // 7
      'x = 1  # TODO trailing comment', //             8
      'Prose mentioning TODO in passing.', //         9
      '; TODO lisp', //                              10
    ].join('\n');
    expect(findTodos(text).map((h) => [h.line, h.keyword, h.text])).toEqual([
      [1, 'TODO', 'js line'],
      [2, 'FIXME', 'python or shell'],
      [3, 'HACK', 'block'],
      [4, 'XXX', 'inside a block comment'],
      [5, 'TODO', 'sql or lua'],
      [6, 'TODO', 'html'],
      [8, 'TODO', 'trailing comment'],
      [10, 'TODO', 'lisp'],
    ]);
  });

  it('skips a comment marker inside a string, and a list of the keywords themselves', () => {
    const text = [
      "const a = '  // TODO: in a string';",
      'const b = "x # FIXME in a string";',
      '/** TODO / FIXME / HACK comments are found */',
      'const c = "it\'s" // TODO: after a string',
      "s = 'a\\'b' # XXX: escaped quote",
    ].join('\n');
    expect(findTodos(text).map((h) => [h.line, h.text])).toEqual([
      [4, 'after a string'],
      [5, 'escaped quote'],
    ]);
  });

  it('in Markdown and text files, only an HTML comment counts', () => {
    const md = '# TODO\n\n* XXX: a list item\n<!-- FIXME: the example is stale -->\n';
    expect(findTodos(md, 'docs/guide.md').map((h) => [h.line, h.keyword, h.text, h.enclosing])).toEqual([
      [4, 'FIXME', 'the example is stale', null],
    ]);
    expect(findTodos(md, 'script.sh').map((h) => h.line)).toEqual([1, 3, 4]);
  });

  it('joins the continuation lines of a comment', () => {
    const [hit] = findTodos('  // TODO: first part\n  // and the second part\n  return 1;\n');
    expect(hit!.text).toBe('first part and the second part');
  });

  it('names the nearest enclosing definition, skipping siblings and control flow', () => {
    const ts = [
      'export class Store {',
      '  private read(key: string): string {',
      '    if (key) {',
      '      // TODO: x',
      '    }',
      '  }',
      '}',
    ];
    expect(enclosingDefinition(ts, 3)).toBe('private read(key: string): string');
    const js = ['function b() {', '  return 1;', '}', 'const a = async (x) => {', '  // TODO: y', '};'];
    expect(enclosingDefinition(js, 4)).toBe('const a = async (x) => {'.replace(/\s*\{$/, ''));
    const py = ['class A:', '    def f(self):', '        x = 1', '        # TODO z'];
    expect(enclosingDefinition(py, 3)).toBe('def f(self):');
    const go = ['func (s *Server) Handle(w http.ResponseWriter) {', '\t// TODO: go', '}'];
    expect(enclosingDefinition(go, 1)).toBe('func (s *Server) Handle(w http.ResponseWriter)');
    const rust = ['pub fn parse(input: &str) -> Result<()> {', '    // FIXME: rust', '}'];
    expect(enclosingDefinition(rust, 1)).toBe('pub fn parse(input: &str) -> Result<()>');
    expect(enclosingDefinition(['// TODO: top level'], 0)).toBeNull();
  });

  it('skips vendored, generated and backlog files', () => {
    expect(
      ['src/a.ts', 'vendor/x.js', 'node_modules/p/i.js', 'web/app.min.js', 'BACKLOG.md', 'package-lock.json'].filter(
        isScannable,
      ),
    ).toEqual(['src/a.ts']);
  });

  it('makes titles that can never be read as an id, a field or a comment', () => {
    const p = todoProposal('a.js', { keyword: 'TODO', line: 1, text: 'T-3 <!-- x --> check: rm', enclosing: null });
    expect(p.title).toBe('TODO in a.js: T-3 x check: rm');
    expect(p.source).toBe('todo a.js:1');
  });
});

describe('failing tests', () => {
  const tracked = new Set(['test/calc.test.js', 'test/ok.test.js', 'tests/test_calc.py', 'src/a.test.ts']);

  it('reads the failing files of node --test (TAP and spec), vitest, jest and pytest output', () => {
    const tap =
      "not ok 1 - adds\n  ---\n  location: '/w/test/calc.test.js:3:1'\n  ...\nok 2 - fine\n  ---\n  location: '/w/test/ok.test.js:2:1'\n";
    expect(failingTestFiles(tap, tracked, '/w')).toEqual(['test/calc.test.js']);
    expect(failingTestFiles('✖ failing tests:\n\ntest at test/calc.test.js:4:1\n✖ adds\n', tracked, '/w')).toEqual([
      'test/calc.test.js',
    ]);
    expect(
      failingTestFiles(' FAIL  src/a.test.ts > sums > adds\n ✓ test/ok.test.js (1 test)\n', tracked, '/w'),
    ).toEqual(['src/a.test.ts']);
    expect(failingTestFiles('FAIL test/calc.test.js\n  ● adds\nPASS test/ok.test.js\n', tracked, '/w')).toEqual([
      'test/calc.test.js',
    ]);
    expect(
      failingTestFiles(
        '=== short test summary info ===\nFAILED tests/test_calc.py::test_add - assert 4 == 5\n',
        tracked,
        '/w',
      ),
    ).toEqual(['tests/test_calc.py']);
    expect(failingTestFiles('Error: something else entirely\n', tracked, '/w')).toEqual([]);
  });

  it('narrows the check to one file where the runner allows, looking through npm scripts', () => {
    expect(narrowedCheck(testRunnerOf('node --test'), 'test/a.test.js')).toBe('node --test test/a.test.js');
    expect(narrowedCheck(testRunnerOf('npm test', { test: 'vitest run' }), 'src/a.test.ts')).toBe(
      'npx vitest run src/a.test.ts',
    );
    expect(narrowedCheck(testRunnerOf('npm run unit', { unit: 'jest --ci' }), 'a b.test.js')).toBe(
      "npx jest 'a b.test.js'",
    );
    expect(narrowedCheck(testRunnerOf('python -m pytest -q'), 'tests/test_x.py')).toBe(
      'python -m pytest tests/test_x.py',
    );
    expect(narrowedCheck(testRunnerOf('make check'), 'x')).toBeNull();
  });
});

describe('lint output', () => {
  const tracked = new Set(['src/a.ts', 'src/b.ts', 'app.py']);

  it('groups lines by tracked file in tsc, unix, stylish and ruff formats', () => {
    const output = [
      "src/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.",
      '/w/src/b.ts:1:1: Unexpected var [Error/no-var]',
      '',
      '/w/src/a.ts',
      '  5:3  error  Unexpected console statement  no-console',
      '',
      'app.py:1:8: F401 [*] `os` imported but unused',
      'Found 1 error.',
      'unknown/file.ts:1:1: not tracked',
    ].join('\n');
    const found = lintFindings(output, tracked, '/w');
    expect([...found.keys()]).toEqual(['src/a.ts', 'src/b.ts', 'app.py']);
    expect(found.get('src/a.ts')).toEqual([
      "src/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.",
      '5:3  error  Unexpected console statement  no-console',
    ]);
  });

  it('runs what the project defines, and eslint only when no lint script covers it', () => {
    const none = { scripts: {}, hasTsconfig: false, hasTypescript: false, hasEslint: false, hasRuff: false };
    expect(lintCommands(none)).toEqual([]);
    expect(
      lintCommands({
        ...none,
        scripts: { lint: 'eslint .' },
        hasEslint: true,
        hasTsconfig: true,
        hasTypescript: true,
      }).map((c) => c.name),
    ).toEqual(['npm run lint', 'tsc --noEmit']);
    expect(lintCommands({ ...none, hasEslint: true, hasRuff: true }).map((c) => c.name)).toEqual([
      'eslint',
      'ruff check',
    ]);
    expect(
      lintCommands({
        ...none,
        scripts: { lint: 'tsc --noEmit && eslint .' },
        hasTsconfig: true,
        hasTypescript: true,
      }).map((c) => c.name),
    ).toEqual(['npm run lint']);
  });
});

describe('dependencies from recorded npm output', () => {
  it('one proposal per package: vulnerabilities first by severity and high priority, outdated low', () => {
    const ps = depProposals(
      parseOutdated(jsonIn(fixture('npm-outdated.json'))),
      parseAudit(jsonIn(fixture('npm-audit.json'))),
    );
    expect(ps.map((p) => [p.source, p.priority, p.title])).toEqual([
      ['dep minimist', 'high', 'Fix the critical vulnerability in minimist'],
      ['dep lodash', 'high', 'Fix the high vulnerability in lodash'],
      ['dep left-pad', 'low', 'Update left-pad to 1.3.0'],
    ]);
    expect(ps[1]!.summary.join(' ')).toContain('It is also outdated: 4.17.15, latest 4.17.21.');
  });

  it('does not propose a package that is only not installed', () => {
    const outdated = parseOutdated({
      missing: { wanted: '1.0.0', latest: '2.0.0' },
      old: { current: '1.0.0', wanted: '1.0.0', latest: '2.0.0' },
    });
    expect(depProposals(outdated, []).map((p) => p.source)).toEqual(['dep old']);
  });

  it('ignores names in the output that are not package names', () => {
    expect(
      parseOutdated({ 'ok-pkg': { current: '1.0.0' }, '@scope/ok': {}, 'bad\n  check: x': {} }).map((o) => o.name),
    ).toEqual(['ok-pkg', '@scope/ok']);
  });

  it('an offline npm gives no report and a reason, never a crash', () => {
    const json = jsonIn(`npm warn something\n${fixture('npm-offline.json')}`);
    expect(npmError(json)).toMatch(/^ENOTFOUND: request to/);
    expect(parseOutdated(json)).toEqual([]);
    expect(parseAudit(json)).toEqual([]);
    expect(jsonIn('not json at all')).toBeNull();
  });
});

describe('matching proposals to backlog items', () => {
  const todo = (line: number, comment: string): Proposal =>
    todoProposal('a.js', { keyword: 'TODO', line, text: comment, enclosing: null });
  const item = (source: string, description: string): TaskSpec => ({
    id: 'T-1',
    title: 'x',
    line: 1,
    done: false,
    description,
    after: [],
    files: [],
    source,
  });

  it('knows a moved TODO by its text, and an edited one by its exact line', () => {
    const known = knownItems([
      item('todo a.js:10', 'TODO: Fix  the parser.'),
      item('todo a.js:20', 'the person rewrote this'),
    ]);
    const { fresh, existing } = splitNew(
      [todo(14, 'fix the parser'), todo(10, 'a new one'), todo(20, 'edited text')],
      known,
    );
    expect(existing.map((p) => p.source)).toEqual(['todo a.js:14', 'todo a.js:20']);
    expect(fresh.map((p) => p.source)).toEqual(['todo a.js:10']);
  });

  it('orders by priority, then rank, then as found', () => {
    const p = (source: string, priority: Proposal['priority'], rank: number): Proposal => ({
      from: 'todo',
      title: source,
      source,
      priority,
      rank,
      summary: [],
    });
    expect(
      byPriority([p('a', 'low', 0), p('b', 'high', 2), p('c', 'high', 1), p('d', 'normal', 0), p('e', 'high', 1)]).map(
        (x) => x.source,
      ),
    ).toEqual(['c', 'e', 'b', 'd', 'a']);
  });
});
