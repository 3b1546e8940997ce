import { describe, expect, it } from 'vitest';
import {
  checkDefinitionRules,
  definitionFiles,
  reachedScripts,
  simpleCommands,
  type FileVersions,
} from '../../../src/core/guard/check-definition.js';

const pkg = (scripts: Record<string, string>, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ name: 'p', scripts, ...extra }, null, 2);
const files = (...versions: FileVersions[]) => new Map(versions.map((v) => [v.path, v]));
const rules = (check: string, ...versions: FileVersions[]) =>
  checkDefinitionRules(
    check,
    versions.map((v) => v.path),
    files(...versions),
  );

describe('what the check runs', () => {
  it('splits command lines into simple commands without env prefixes', () => {
    expect(simpleCommands('CI=1 npm test && npm run lint -- --fix; make check | tee out')).toEqual([
      ['npm', 'test'],
      ['npm', 'run', 'lint', '--', '--fix'],
      ['make', 'check'],
      ['tee', 'out'],
    ]);
  });

  it('follows npm, yarn and pnpm scripts through other scripts, with pre and post scripts', () => {
    const scripts = { test: 'npm run build && vitest run', build: 'tsc', lint: 'eslint .', pretest: 'node gen.js' };
    expect([...reachedScripts('npm test', scripts)].sort()).toEqual([
      'build',
      'postbuild',
      'posttest',
      'prebuild',
      'pretest',
      'test',
    ]);
    expect(reachedScripts('yarn lint', scripts).has('lint')).toBe(true);
    expect(reachedScripts('pnpm run build', scripts).has('build')).toBe(true);
    expect(reachedScripts('yarn install && npx vitest', scripts).size).toBe(0);
  });

  it('refuses a changed script the check reaches, and allows one it does not', () => {
    const base = pkg({ test: 'node --test', lint: 'eslint .' });
    expect(rules('npm test', { path: 'package.json', base, next: pkg({ test: 'exit 0', lint: 'eslint .' }) })).toEqual([
      'guard: package.json scripts.test changed — the check `npm test` runs it',
    ]);
    expect(
      rules('npm test', {
        path: 'package.json',
        base,
        next: pkg({ test: 'node --test', lint: 'eslint --fix .' }, { dependencies: { x: '1' } }),
      }),
    ).toEqual([]);
    expect(
      rules('npm test', {
        path: 'package.json',
        base,
        next: pkg({ test: 'node --test', lint: 'eslint .', pretest: 'exit 0' }),
      }),
    ).toEqual(['guard: package.json scripts.pretest changed — the check `npm test` runs it']);
    expect(
      rules('npm test', {
        path: 'package.json',
        base,
        next: pkg({ test: 'node --test', lint: 'eslint .' }, { jest: { testMatch: [] } }),
      }).join(),
    ).toMatch(/test runner settings/);
  });

  it('refuses test runner configuration, and tsconfig only when the check runs tsc', () => {
    for (const path of [
      'vitest.config.ts',
      'jest.config.js',
      'packages/a/vite.config.mjs',
      '.mocharc.yml',
      'playwright.config.ts',
      'ava.config.cjs',
      'pytest.ini',
      'tox.ini',
      'tests/conftest.py',
    ]) {
      expect(rules('npm test', { path, base: 'a', next: 'b' }), path).toEqual([
        `guard: ${path} changed — a test runner's configuration decides what the check runs`,
      ]);
    }
    expect(rules('npm test', { path: 'tsconfig.json', base: '{}', next: '{"x":1}' })).toEqual([]);
    expect(rules('tsc --noEmit', { path: 'tsconfig.json', base: '{}', next: '{"x":1}' })).toHaveLength(1);
    expect(
      rules(
        'npm run typecheck',
        {
          path: 'package.json',
          base: pkg({ typecheck: 'tsc -p tsconfig.build.json' }),
          next: pkg({ typecheck: 'tsc -p tsconfig.build.json' }),
        },
        { path: 'tsconfig.build.json', base: '{}', next: '{"a":1}' },
      ),
    ).toHaveLength(1);
  });

  it('refuses pytest sections of pyproject.toml and setup.cfg, not the rest of them', () => {
    const toml = '[project]\nname = "x"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n';
    expect(
      rules('pytest', { path: 'pyproject.toml', base: toml, next: toml.replace('name = "x"', 'name = "y"') }),
    ).toEqual([]);
    expect(rules('pytest', { path: 'pyproject.toml', base: toml, next: toml.replace('-q', '-q -k nothing') })).toEqual([
      'guard: pyproject.toml pytest settings changed — they decide what the check runs',
    ]);
    expect(
      rules('pytest', {
        path: 'setup.cfg',
        base: '[tool:pytest]\naddopts = -q\n',
        next: '[tool:pytest]\naddopts = -q --co\n',
      }),
    ).toHaveLength(1);
  });

  it('refuses a changed Makefile or justfile target the check names, and its prerequisites', () => {
    const make = 'CC = cc\n\nbuild:\n\tcc -o app app.c\n\ntest: build\n\t./app --selftest\n\nclean:\n\trm -f app\n';
    const mk = (next: string) => rules('make test', { path: 'Makefile', base: make, next });
    expect(mk(make.replace('./app --selftest', 'true'))).toEqual([
      'guard: Makefile target test changed — the check `make test` runs it',
    ]);
    expect(mk(make.replace('cc -o app app.c', 'touch app'))).toEqual([
      'guard: Makefile target build changed — the check `make test` runs it',
    ]);
    expect(mk(make.replace('rm -f app', 'rm -rf app build'))).toEqual([]);
    expect(mk(make.replace('CC = cc', 'CC = true'))).toEqual([
      'guard: Makefile changed outside its targets — the check `make test` reads it',
    ]);
    expect(rules('make', { path: 'Makefile', base: make, next: make.replace('cc -o app app.c', 'true') })).toHaveLength(
      1,
    );
    const just = 'test:\n    cargo test\n\nfmt:\n    cargo fmt\n';
    expect(rules('just test', { path: 'justfile', base: just, next: just.replace('cargo test', 'true') })).toEqual([
      'guard: justfile target test changed — the check `just test` runs it',
    ]);
    expect(
      rules('just test', { path: 'justfile', base: just, next: just.replace('cargo fmt', 'cargo fmt --all') }),
    ).toEqual([]);
  });

  it('refuses changes to a file the check runs', () => {
    expect(
      rules('./scripts/check.sh && npm test', { path: 'scripts/check.sh', base: 'exit 1', next: 'exit 0' }),
    ).toEqual(['guard: scripts/check.sh changed — the check `./scripts/check.sh && npm test` runs it']);
    expect(rules('node --test', { path: 'src/calc.js', base: 'a', next: 'b' })).toEqual([]);
  });

  it('asks only for the files it compares, and nothing without a check', () => {
    expect(definitionFiles(['package.json', 'src/a.js', 'Makefile', 'pyproject.toml', 'sub/package.json'])).toEqual([
      'package.json',
      'Makefile',
      'pyproject.toml',
    ]);
    expect(checkDefinitionRules(null, ['vitest.config.ts'], new Map())).toEqual([]);
  });
});
