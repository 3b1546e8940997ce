/**
 * The import graph of a source tree, read with a real parser (the oxc parser Vite ships as `parseSync`), and
 * its circles. An edge is every way one of our files names another: `import` and `import type`,
 * `export … from`, a dynamic `import()` of a literal, and a type-level `import('…')`. Only relative
 * specifiers are ours; packages and `node:` built-ins are not edges.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { parseSync } from 'vite';

/** one import, from the file that writes it to the file it names (both relative to the root, with `/`) */
export interface ImportEdge {
  from: string;
  to: string;
  specifier: string;
  /** 1-based line of the specifier in `from` */
  line: number;
}

export interface ImportGraph {
  /** every source file under the folder, relative to the root */
  files: string[];
  edges: ImportEdge[];
}

const SOURCE = /\.(ts|tsx|mts|cts)$/;

async function sourceFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await sourceFiles(path)));
    else if (SOURCE.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** a node of the parser's ESTree-shaped tree */
export interface SyntaxNode {
  type?: unknown;
  start?: number;
  [key: string]: unknown;
}

/** The syntax tree of `source` (a file named `file`: its extension picks TypeScript, TSX…); a syntax error throws. */
export function syntaxTree(file: string, source: string): SyntaxNode {
  const parsed = parseSync(file, source);
  if (parsed.errors.length > 0) {
    throw new Error(`${file} does not parse: ${parsed.errors.map((e) => e.message).join('; ')}`);
  }
  return parsed.program as unknown as SyntaxNode;
}

/** Calls `visitor` on every node under `node`, parents before children. */
export function visit(node: unknown, visitor: (node: SyntaxNode) => void): void {
  if (Array.isArray(node)) {
    for (const child of node) visit(child, visitor);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const n = node as SyntaxNode;
  if (typeof n.type === 'string') visitor(n);
  for (const [key, child] of Object.entries(n)) if (key !== 'parent') visit(child, visitor);
}

/** the nodes that name a module in their `source` */
export const MODULE_REFERENCES: ReadonlySet<unknown> = new Set([
  'ImportDeclaration',
  'ExportNamedDeclaration',
  'ExportAllDeclaration',
  'ImportExpression',
  'TSImportType',
]);

/** The literal text of a specifier node (a string, or a template without `${}`), or null. */
export function literal(node: unknown): { value: string; start: number } | null {
  if (typeof node !== 'object' || node === null) return null;
  const n = node as SyntaxNode;
  if (n.type === 'Literal' && typeof n['value'] === 'string') return { value: n['value'], start: n.start ?? 0 };
  if (n.type === 'TemplateLiteral' && (n['expressions'] as unknown[]).length === 0) {
    const [quasi] = n['quasis'] as Array<{ value: { cooked: string } }>;
    if (quasi !== undefined) return { value: quasi.value.cooked, start: n.start ?? 0 };
  }
  return null;
}

/** Every module specifier written in `source` (a file named `file`), with where it starts. */
export function specifiers(file: string, source: string): Array<{ value: string; start: number }> {
  const found: Array<{ value: string; start: number }> = [];
  visit(syntaxTree(file, source), (node) => {
    if (!MODULE_REFERENCES.has(node.type)) return;
    const spec = literal(node['source']);
    if (spec !== null) found.push(spec);
  });
  return found;
}

/** The file a relative specifier names: NodeNext writes `./x.js` for `x.ts` (or `x.tsx`). */
export function resolveSpecifier(fromAbs: string, specifier: string): string | null {
  const target = join(dirname(fromAbs), specifier);
  const candidates = [target];
  const js = /\.(m|c)?js$/.exec(target);
  if (js !== null) {
    const stem = target.slice(0, -js[0].length);
    const ext = js[1] ?? '';
    candidates.unshift(`${stem}.${ext}ts`, ...(ext === '' ? [`${stem}.tsx`] : []));
  }
  return candidates.find((c) => existsSync(c)) ?? null;
}

function lineOf(source: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset; i++) if (source.charCodeAt(i) === 10) line++;
  return line;
}

const posix = (path: string) => path.split(sep).join('/');

/**
 * The graph of `dir` (under `root`). A relative specifier that names no file throws: the graph would
 * otherwise miss an edge without a word.
 */
export async function importGraph(root: string, dir: string): Promise<ImportGraph> {
  const files = (await sourceFiles(join(root, dir))).sort();
  const edges: ImportEdge[] = [];
  for (const abs of files) {
    const source = await readFile(abs, 'utf8');
    const from = posix(relative(root, abs));
    for (const spec of specifiers(abs, source)) {
      if (!spec.value.startsWith('./') && !spec.value.startsWith('../')) continue;
      const target = resolveSpecifier(abs, spec.value);
      if (target === null) throw new Error(`${from}: '${spec.value}' names no file`);
      edges.push({ from, to: posix(relative(root, target)), specifier: spec.value, line: lineOf(source, spec.start) });
    }
  }
  return { files: files.map((f) => posix(relative(root, f))), edges };
}

/**
 * The circles of a graph: its strongly connected components of more than one file, and any file that
 * imports itself (Tarjan's algorithm). Each circle is listed from its smallest file name, walking edges
 * back to it, so that a failure can print it as `a → b → a`.
 */
export function circles(graph: ImportGraph): string[][] {
  const next = new Map<string, string[]>();
  for (const file of graph.files) next.set(file, []);
  for (const edge of graph.edges) {
    const list = next.get(edge.from) ?? [];
    if (!list.includes(edge.to)) list.push(edge.to);
    next.set(edge.from, list);
    if (!next.has(edge.to)) next.set(edge.to, []);
  }

  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let counter = 0;
  // Iterative, so that a deep chain of imports cannot overflow the call stack.
  for (const start of next.keys()) {
    if (index.has(start)) continue;
    const work: Array<{ file: string; i: number }> = [{ file: start, i: 0 }];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const targets = next.get(frame.file)!;
      if (frame.i < targets.length) {
        const target = targets[frame.i++]!;
        if (!index.has(target)) {
          index.set(target, counter);
          low.set(target, counter++);
          stack.push(target);
          onStack.add(target);
          work.push({ file: target, i: 0 });
        } else if (onStack.has(target)) {
          low.set(frame.file, Math.min(low.get(frame.file)!, index.get(target)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent !== undefined) low.set(parent.file, Math.min(low.get(parent.file)!, low.get(frame.file)!));
      if (low.get(frame.file) === index.get(frame.file)) {
        const component: string[] = [];
        for (let file = stack.pop(); file !== undefined; file = stack.pop()) {
          onStack.delete(file);
          component.push(file);
          if (file === frame.file) break;
        }
        const selfLoop = component.length === 1 && next.get(component[0]!)!.includes(component[0]!);
        if (component.length > 1 || selfLoop) components.push(component);
      }
    }
  }
  return components.map((component) => cycleThrough(component, next));
}

/** One walk around a component, from its smallest file back to it (a breadth-first shortest way round). */
function cycleThrough(component: string[], next: Map<string, string[]>): string[] {
  const members = new Set(component);
  const first = [...component].sort()[0]!;
  const cameFrom = new Map<string, string>();
  const queue = [first];
  while (queue.length > 0) {
    const file = queue.shift()!;
    for (const target of next.get(file)!) {
      if (!members.has(target)) continue;
      if (target === first) {
        const path = [file];
        for (let at = file; at !== first; ) {
          at = cameFrom.get(at)!;
          path.unshift(at);
        }
        return [...path, first];
      }
      if (!cameFrom.has(target)) {
        cameFrom.set(target, file);
        queue.push(target);
      }
    }
  }
  throw new Error(`no way round the component of ${first}`);
}
