import { describe, expect, it } from 'vitest';
import { countAssertions, skipMarkers, testFileMatcher, weakenedTest } from '../../../src/core/guard/tests.js';

describe('test files', () => {
  it('are recognised by the usual conventions and by tests: patterns', () => {
    const isTest = testFileMatcher(['e2e/**', 'checks/*.mjs']);
    for (const p of [
      'test/a.js',
      'tests/unit/b.py',
      'src/__tests__/c.tsx',
      'spec/d_spec.rb',
      'src/e.test.ts',
      'src/f.spec.js',
      'pkg/test_g.py',
      'pkg/h_test.py',
      'cmd/i_test.go',
      'e2e/flow.ts',
      'checks/x.mjs',
    ]) {
      expect(isTest(p), p).toBe(true);
    }
    for (const p of [
      'src/testing.ts',
      'src/contest.js',
      'latest/a.js',
      'README.md',
      'src/attest_go.go',
      'checks/sub/x.mjs',
    ]) {
      expect(isTest(p), p).toBe(false);
    }
  });

  it('count assertions of the common runners, not commented-out ones', () => {
    expect(
      countAssertions(
        'a.test.js',
        "import assert from 'node:assert/strict';\nassert.equal(1, 1);\nassert(x);\n// assert.equal(2, 2);\n/* expect(1).toBe(1) */\n",
      ),
    ).toBe(2);
    expect(countAssertions('a.test.ts', 'expect(a).toBe(1);\nexpect(b).toEqual([]);\nresult.should.equal(3);\n')).toBe(
      3,
    );
    expect(countAssertions('a.test.js', 't.is(a, 1); t.deepEqual(b, []); t.true(c); t.throws(() => f());\n')).toBe(4);
    expect(
      countAssertions(
        'test_a.py',
        'def test_x(self):\n    assert x == 1\n    self.assertEqual(a, b)\n    # assert y\n    with pytest.raises(ValueError):\n        f()\n',
      ),
    ).toBe(3);
    expect(
      countAssertions(
        'a_test.go',
        'if got != 1 {\n\tt.Errorf("got %d", got)\n}\nassert.Equal(t, 1, got)\nrequire.NoError(t, err)\n',
      ),
    ).toBe(3);
    expect(countAssertions('AssertTest.java', 'assertEquals(1, x);\nassertThat(y).isTrue();\n')).toBe(2);
    expect(countAssertions('lib.rs', 'assert_eq!(a, b);\nassert!(c);\n')).toBe(2);
  });

  it('find skip, only and todo markers', () => {
    const markers = skipMarkers(
      'a.test.js',
      "test.skip('a', () => {});\nit.only('b');\ndescribe.todo('c');\nxit('d');\ntest('e', { skip: true }, () => {});\ntest('f', { skip: false }, () => {});\n// it.skip('commented')\n",
    );
    expect(Object.fromEntries(markers)).toEqual({
      'test.skip': 1,
      'it.only': 1,
      'describe.todo': 1,
      xit: 1,
      '{ skip }': 1,
    });
    expect(
      skipMarkers(
        'a.test.js',
        "test('pages', async () => {\n  expect(await list({ skip: 10, only: 'x' })).toHaveLength(5);\n});\n",
      ).size,
    ).toBe(0);
    expect([
      ...skipMarkers(
        'test_a.py',
        '@pytest.mark.skip(reason="x")\n@pytest.mark.xfail\ndef test(): pytest.skip("y")\n',
      ).keys(),
    ]).toEqual(['@pytest.mark.skip', '@pytest.mark.xfail', 'pytest.skip']);
    expect([...skipMarkers('a_test.go', 't.Skip("later")\n').keys()]).toEqual(['t.Skip']);
    expect(skipMarkers('test_model.py', 'model.fit(X, y)\nassert model.score(X, y) > 0.9\n').size).toBe(0);
    expect(
      skipMarkers('a.test.js', "test('skips nothing', () => { const skip = 1; expect(skip).toBe(1); });\n").size,
    ).toBe(0);
  });

  it('are weakened by deletion, fewer assertions or new markers, not by more tests', () => {
    const base = "test('a', () => {\n  expect(1).toBe(1);\n  expect(2).toBe(2);\n});\n";
    expect(weakenedTest('t/a.test.js', base, null)).toEqual([
      'guard: test file t/a.test.js was deleted or renamed; it exists on base',
    ]);
    expect(weakenedTest('t/a.test.js', base, base.replace('  expect(2).toBe(2);\n', ''))).toEqual([
      'guard: test file t/a.test.js has 1 assertion, base had 2',
    ]);
    expect(weakenedTest('t/a.test.js', base, base.replace("test('a'", "test.skip('a'"))).toEqual([
      'guard: test file t/a.test.js adds test.skip (1 now, base had 0)',
    ]);
    expect(weakenedTest('t/a.test.js', base, `${base}test('b', () => {\n  expect(3).toBe(3);\n});\n`)).toEqual([]);
    expect(weakenedTest('t/new.test.js', null, base)).toEqual([]);
    expect(weakenedTest('t/new.test.js', null, "it.only('x', () => {});\n")).toEqual([
      'guard: test file t/new.test.js adds it.only (1 now, base had 0)',
    ]);
    // a marker base already had is no new weakening
    const skipped = "test.skip('old', () => {});\n" + base;
    expect(weakenedTest('t/a.test.js', skipped, `${skipped}test('c', () => { expect(4).toBe(4); });\n`)).toEqual([]);
  });
});
