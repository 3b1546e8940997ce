/**
 * The benchmarks import modules one way, the way TypeScript checks: a literal specifier, `../src/x.js` for
 * the engine (loaded from dist/ by the benchmarks' module resolution) and `./x.js` for one another. A
 * module named a second time as a path string (`new URL('./lib.ts', …)`, a `dist('core/x.js')` typed by
 * `typeof import(…)`) is what the compiler cannot follow; this fails on any.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/paths.js';
import { literal, MODULE_REFERENCES, resolveSpecifier, syntaxTree, visit } from './import-graph.js';

const BENCH = join(ROOT, 'bench');

/** the one program the benchmarks start by its path: the built CLI, as it ships */
const BUILT_CLI = '../dist/cli.js';
/**
 * The one import written with its `.ts` name: the entry Node starts without the benchmarks' module
 * resolution imports the module that registers it (TypeScript checks side-effect imports here).
 */
const ENTRY_HOOKS: Readonly<Record<string, string>> = { 'run.ts': './hooks.ts' };

const MODULE_FILE = /\.(ts|tsx|mts|cts|js|mjs|cjs|jsx|json)$/;
const relative = (text: string) => text.startsWith('./') || text.startsWith('../');

/** What in `source` (the bench file `file`) names a module other than by a checked import. */
function findings(file: string, source: string, abs: string | null = null): string[] {
  const out: string[] = [];
  const specifierNodes = new Set<unknown>();
  const tree = syntaxTree(file, source);
  visit(tree, (node) => {
    if (!MODULE_REFERENCES.has(node.type) || node['source'] === null) return; // null: `export const …`
    specifierNodes.add(node['source']);
    const spec = literal(node['source']);
    if (node.type === 'TSImportType') {
      out.push(`a type-level import('${spec?.value ?? '…'}'): import the type by name`);
    } else if (spec === null) {
      out.push('an import() of a computed path');
    } else if (relative(spec.value)) {
      const entry = ENTRY_HOOKS[file];
      const sideEffect = node.type === 'ImportDeclaration' && (node['specifiers'] as unknown[]).length === 0;
      if (!spec.value.endsWith('.js') && !(spec.value === entry && sideEffect)) {
        out.push(`'${spec.value}': a relative import names the module's .js`);
      }
      if (abs !== null && resolveSpecifier(abs, spec.value) === null) out.push(`'${spec.value}' names no file`);
    }
  });
  visit(tree, (node) => {
    if (specifierNodes.has(node)) return;
    const texts =
      node.type === 'Literal' && typeof node['value'] === 'string'
        ? [node['value']]
        : node.type === 'TemplateElement'
          ? [(node['value'] as { cooked: string }).cooked]
          : [];
    for (const text of texts) {
      if (relative(text) && MODULE_FILE.test(text) && text !== BUILT_CLI)
        out.push(`the string '${text}' names a module`);
    }
  });
  return out;
}

describe('the benchmarks import modules one way', () => {
  it('every bench file: literal .js imports, no module named as a string, no type-level import()', async () => {
    const files = (await readdir(BENCH)).filter((name) => name.endsWith('.ts')).sort();
    expect(files).toContain('run.ts');
    expect(files).toContain('lib.ts');
    const all: string[] = [];
    for (const name of files) {
      const source = await readFile(join(BENCH, name), 'utf8');
      all.push(...findings(name, source, join(BENCH, name)).map((finding) => `bench/${name}: ${finding}`));
    }
    expect(all).toEqual([]);
  });

  it('finds the ways a module was named a second time', () => {
    const old = [
      "const lib = (await import(new URL('./lib.ts', import.meta.url).href)) as typeof import('./lib.js');",
      "const { Fleet } = await lib.dist<typeof import('../src/core/fleet/fleet.js')>('core/fleet/fleet.js');",
      'type T = import("./lib.js").Timings;',
      "import { quick } from './lib.ts';",
      "const file = '../test/helpers/fake-fleet.ts';",
      'const loaded = await import(`../dist/${name}.js`);',
    ].join('\n');
    expect(findings('old.ts', old)).toEqual([
      'an import() of a computed path',
      "a type-level import('./lib.js'): import the type by name",
      "a type-level import('../src/core/fleet/fleet.js'): import the type by name",
      "a type-level import('./lib.js'): import the type by name",
      "'./lib.ts': a relative import names the module's .js",
      'an import() of a computed path',
      "the string './lib.ts' names a module",
      "the string '../test/helpers/fake-fleet.ts' names a module",
    ]);
    // the entry's one `.ts` import registers the resolution; anywhere else, or importing names, it is a finding
    expect(findings('run.ts', "import './hooks.ts';\nimport { HOOKS } from './hooks.js';\n")).toEqual([]);
    expect(findings('lib.ts', "import './hooks.ts';\n")).toEqual([
      "'./hooks.ts': a relative import names the module's .js",
    ]);
    expect(findings('run.ts', "import { HOOKS } from './hooks.ts';\n")).toEqual([
      "'./hooks.ts': a relative import names the module's .js",
    ]);
  });

  it('TypeScript checks them: npm run typecheck covers bench/', async () => {
    const config = JSON.parse(await readFile(join(ROOT, 'tsconfig.json'), 'utf8')) as {
      include: string[];
      compilerOptions: Record<string, unknown>;
    };
    expect(config.include).toContain('bench');
    // `import './hooks.ts'` is resolved, so a wrong name fails the typecheck
    expect(config.compilerOptions['noUncheckedSideEffectImports']).toBe(true);
  });
});
