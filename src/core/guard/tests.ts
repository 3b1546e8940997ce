/**
 * Test files an attempt must not weaken: deleted or renamed (they exist on base), fewer assertions than
 * on base, or new skip/only/todo markers. Counting is textual, after comments are removed, so that an
 * assertion commented out counts as removed.
 */
import ignore from 'ignore';

const TEST_DIRS = new Set(['test', 'tests', '__tests__', 'spec', 'specs', '__test__']);

/** true for a test file by the usual conventions, or by the front matter's `tests:` patterns */
export function testFileMatcher(patterns: readonly string[]): (path: string) => boolean {
  const extra = ignore().add([...patterns]);
  return (path) => {
    const parts = path.split('/');
    const name = parts.at(-1)!;
    return (
      parts.slice(0, -1).some((dir) => TEST_DIRS.has(dir)) ||
      /\.(?:test|spec)\.[^/]+$/.test(name) ||
      /^test_.*\.py$/.test(name) ||
      /_test\.(?:py|go)$/.test(name) ||
      (patterns.length > 0 && extra.ignores(path))
    );
  };
}

/** The text without comments: `#` comments for Python, Ruby and shell, `//` and block comments otherwise. */
export function withoutComments(path: string, text: string): string {
  if (/\.(?:py|rb|sh|bash|pl|r|ya?ml|toml)$/i.test(path)) return text.replace(/(^|\s)#.*$/gm, '$1');
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:\\])\/\/.*$/gm, '$1');
}

const ASSERTIONS = [
  /\bassert\w*(?:\.\w+)*!?\s*\(/g, // assert(…), assert.equal(…), assertEquals(…), self.assertTrue(…), assert_eq!(…)
  /^\s*assert\s/gm, // Python's assert statement
  /\bexpect\s*\(/g,
  /\.should\b/g,
  /\bt\.(?:is|not|deepEqual|notDeepEqual|like|true|false|truthy|falsy|throws|throwsAsync|notThrows|notThrowsAsync|regex|notRegex|snapshot|pass|fail|equal|same|ok|notOk|match|strictEqual)\s*\(/g,
  /\bt\.(?:Error|Errorf|Fatal|Fatalf|Fail|FailNow)\s*\(/g, // Go
  /\brequire\.\w+\s*\(/g, // testify
  /\bself\.fail\w*\s*\(/g,
  /\bpytest\.raises\b/g,
];

const SKIP_MARKERS = [
  /\b(?:it|test|describe|suite|context|specify)\.(?:skip|only|todo|skipIf|runIf|fixme)\b/g,
  /(?<![.\w$])(?:xit|xdescribe|xtest|xcontext|xspecify|fit|fdescribe|ftest)\s*\(/g, // not model.fit(…)
  /@pytest\.mark\.(?:skip|skipif|xfail)\b/g,
  /\bpytest\.skip\s*\(/g,
  /@unittest\.skip\w*/g,
  /\bself\.skipTest\s*\(/g,
  /\bt\.(?:Skip|SkipNow|Skipf|skip|todo)\s*\(/g,
  // node:test options, `test('name', { skip: true }, fn)`; not `{ skip: 10 }` elsewhere (pagination and the like)
  /\b(?:test|it|describe|suite)\s*\(\s*(?:'[^']*'|"[^"]*"|`[^`]*`)\s*,\s*\{[^}]*?\b(skip|todo|only)\s*:(?!\s*false\b)/g,
  /#\[ignore\]/g,
];

export function countAssertions(path: string, text: string): number {
  const code = withoutComments(path, text);
  return ASSERTIONS.reduce((n, re) => n + (code.match(re)?.length ?? 0), 0);
}

/** Each skip/only/todo marker as written (e.g. `test.skip`), with how often it appears. */
export function skipMarkers(path: string, text: string): Map<string, number> {
  const code = withoutComments(path, text);
  const found = new Map<string, number>();
  for (const re of SKIP_MARKERS) {
    for (const m of code.matchAll(re)) {
      const marker = m[1] !== undefined ? `{ ${m[1]} }` : m[0].replace(/[\s(]+$/, '');
      found.set(marker, (found.get(marker) ?? 0) + 1);
    }
  }
  return found;
}

/** What an attempt did to one test file; `base` null for a new file, `next` null for a deleted one. */
export function weakenedTest(path: string, base: string | null, next: string | null): string[] {
  if (base !== null && next === null) return [`guard: test file ${path} was deleted or renamed; it exists on base`];
  if (next === null) return [];
  const reasons: string[] = [];
  if (base !== null) {
    const before = countAssertions(path, base);
    const after = countAssertions(path, next);
    if (after < before)
      reasons.push(`guard: test file ${path} has ${after} assertion${after === 1 ? '' : 's'}, base had ${before}`);
  }
  const was = base === null ? new Map<string, number>() : skipMarkers(path, base);
  for (const [marker, n] of skipMarkers(path, next)) {
    const had = was.get(marker) ?? 0;
    if (n > had) reasons.push(`guard: test file ${path} adds ${marker} (${n} now, base had ${had})`);
  }
  return reasons;
}
