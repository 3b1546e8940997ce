/**
 * No file of src/ reaches itself through imports (type imports included: a circle of types is still two
 * files that cannot be understood apart), and no import climbs the part order of {@link CORE_PARTS} and
 * {@link ADAPTER_PARTS}. Biome's `noImportCycles` says the first in the editor; this walks the whole graph
 * and prints each circle whole.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/paths.js';
import { circles, type ImportEdge, type ImportGraph, importGraph } from './import-graph.js';
import { ADAPTER_PARTS, ADAPTERS_MAY_IMPORT_CORE, CORE_PARTS, partOf } from './parts.js';

const show = (circle: readonly string[]) => circle.join(' → ');

/** The imports of a graph that a part may not make: to a part not in its list, or from an adapter into core. */
function climbing(graph: ImportGraph): ImportEdge[] {
  return graph.edges.filter((edge) => {
    const from = partOf(edge.from);
    const to = partOf(edge.to);
    if (from === null || to === null) return false;
    if (from.room === 'adapters' && to.room === 'core') return !ADAPTERS_MAY_IMPORT_CORE.includes(to.part);
    if (from.room !== to.room) return true;
    if (from.part === to.part) return false;
    const parts = from.room === 'core' ? CORE_PARTS : ADAPTER_PARTS;
    const part = parts.find((p) => p.name === from.part);
    return part === undefined || !part.imports.includes(to.part);
  });
}

const showEdge = (edge: ImportEdge) => `${edge.from}:${edge.line} imports '${edge.specifier}' (${edge.to})`;

describe('the import graph of src/', () => {
  let graph: ImportGraph;
  beforeAll(async () => {
    graph = await importGraph(ROOT, 'src');
  });

  it('has no circle', () => {
    expect(graph.files.length).toBeGreaterThan(100);
    expect(graph.edges.length).toBeGreaterThan(graph.files.length);
    expect(circles(graph).map(show)).toEqual([]);
  });

  it('climbs no part: every import between parts goes to one the importing part may import', () => {
    const between = graph.edges.filter((e) => {
      const from = partOf(e.from);
      const to = partOf(e.to);
      return from !== null && to !== null && (from.room !== to.room || from.part !== to.part);
    });
    // the check below has something to check: parts of both rooms import one another
    expect(between.some((e) => partOf(e.from)?.room === 'core')).toBe(true);
    expect(between.some((e) => partOf(e.from)?.room === 'adapters' && partOf(e.to)?.room === 'adapters')).toBe(true);
    expect(climbing(graph).map(showEdge)).toEqual([]);
  });
});

describe('the import graph on a planted tree', () => {
  let dir: string;
  const files: Record<string, string> = {
    // a → b (type only) → c (re-export) → a (dynamic import): one circle of three
    'src/a.ts': "import type { B } from './b.js';\nexport type A = B;\n",
    'src/b.ts': "export * from './c.js';\nexport type B = number;\n",
    'src/c.ts': "export async function load() {\n  return await import('./a.js');\n}\n",
    // d imports itself through a type-level import(); e imports d, a package and a built-in: no circle
    'src/d.tsx': "export type D = import('./d.js').E;\nexport type E = 1;\nexport const el = <b>don't</b>;\n",
    'src/e.ts':
      "import { x } from 'some-package';\nimport 'node:fs';\nimport type { D } from './d.js';\n// import('./a.js')\nexport const s = \"import('./b.js')\";\n",
    // a part climbing: text (the bottom of the engine) imports fleet; an adapter imports a part of core
    'src/core/text/low.ts': "import { top } from '../fleet/top.js';\nexport const low = top;\n",
    'src/core/fleet/top.ts': 'export const top = 1;\n',
    'src/adapters/git/run.ts': "import { top } from '../../core/fleet/top.js';\nexport const run = top;\n",
    'src/adapters/fs/ok.ts': "import { low } from '../../core/text/low.js';\nexport const ok = low;\n",
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'loopfleet-circles-'));
    for (const [file, text] of Object.entries(files)) {
      await mkdir(dirname(join(dir, file)), { recursive: true });
      await writeFile(join(dir, file), text);
    }
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads every way a file names another, and nothing in comments or strings', async () => {
    const planted = await importGraph(dir, 'src');
    expect(planted.edges.map((e) => `${e.from}:${e.line} → ${e.to}`).sort()).toEqual([
      'src/a.ts:1 → src/b.ts',
      'src/adapters/fs/ok.ts:1 → src/core/text/low.ts',
      'src/adapters/git/run.ts:1 → src/core/fleet/top.ts',
      'src/b.ts:1 → src/c.ts',
      'src/c.ts:2 → src/a.ts',
      'src/core/text/low.ts:1 → src/core/fleet/top.ts',
      'src/d.tsx:1 → src/d.tsx',
      'src/e.ts:3 → src/d.tsx',
    ]);
  });

  it('fails on the circle and on the file that imports itself, printing each', async () => {
    const planted = await importGraph(dir, 'src');
    expect(circles(planted).map(show).sort()).toEqual([
      'src/a.ts → src/b.ts → src/c.ts → src/a.ts',
      'src/d.tsx → src/d.tsx',
    ]);
  });

  it('finds the climbing imports', async () => {
    const planted = await importGraph(dir, 'src');
    expect(climbing(planted).map(showEdge)).toEqual([
      "src/adapters/git/run.ts:1 imports '../../core/fleet/top.js' (src/core/fleet/top.ts)",
      "src/core/text/low.ts:1 imports '../fleet/top.js' (src/core/fleet/top.ts)",
    ]);
  });

  it('refuses a relative import that names no file', async () => {
    await writeFile(join(dir, 'src', 'f.ts'), "import { gone } from './gone.js';\n");
    await expect(importGraph(dir, 'src')).rejects.toThrow("src/f.ts: './gone.js' names no file");
    await rm(join(dir, 'src', 'f.ts'));
  });
});
