import { readdirSync, readFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { parseSync } from 'vite';
import { describe, expect, it } from 'vitest';

/**
 * Comments in src/ name symbols (`{@link Fleet}`) or say it in words, never a file of the repository: a
 * file moves or is renamed and a comment that names it goes stale without anything failing. The comments
 * come from the parser, so a string or a regular expression that looks like a file name is not one.
 */

const ROOT = join(import.meta.dirname, '..', '..');
const SRC = join(ROOT, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(e.name) ? [path] : [];
  });
}

const FILES = sourceFiles(SRC);
/** `gates.ts` and `gates.js` (how an import names it) for every file of src/. */
const SOURCE_NAMES = new Set(FILES.flatMap((f) => [basename(f), basename(f).replace(/\.tsx?$/, '.js')]));

/** Markdown files named in capitals that are the person's, not the repository's documents. */
const PERSON_DOCUMENTS = new Set(['BACKLOG.md', 'AGENTS.md', 'CLAUDE.md', 'GEMINI.md']);

/**
 * The file names and code paths one comment line names: any TypeScript file name, a JavaScript name of a
 * file of src/, a path into src/, test/ or bench/ or a part of the code (`core/…`, `adapters/…`), and a
 * Markdown document of the project (`DESIGN.md`; BACKLOG.md, AGENTS.md and the like are the person's files).
 */
function namedFiles(line: string): string[] {
  const found: string[] = [];
  for (const m of line.matchAll(/[\w@.-]*(?:\/[\w@.-]+)*\.(?:tsx?|mts|cts|jsx?|mjs|cjs)\b/g)) {
    const name = m[0];
    if (/\.(?:tsx?|mts|cts)$/.test(name) || SOURCE_NAMES.has(basename(name))) found.push(name);
  }
  for (const m of line.matchAll(
    /(?<![\w./-])(?:(?:src|test|bench)\/[\w./-]+|(?:core|adapters|domain|ports|ui|commands|demo)\/[\w-][\w./-]*)/g,
  ))
    if (!found.some((f) => f.includes(m[0]) || m[0].includes(f))) found.push(m[0]);
  for (const m of line.matchAll(/(?<![\w/-])[A-Z][A-Z0-9_-]*\.md\b/g))
    if (!PERSON_DOCUMENTS.has(m[0])) found.push(m[0]);
  return found;
}

interface Finding {
  where: string;
  line: string;
  names: string[];
}

/** The comment lines of one source text that name files, with their line numbers. */
function commentFindings(file: string, text: string): Finding[] {
  const out: Finding[] = [];
  const parsed = parseSync(file, text, { lang: file.endsWith('.tsx') ? 'tsx' : 'ts' });
  expect(parsed.errors, file).toEqual([]);
  for (const c of parsed.comments) {
    const raw = text.slice(c.start, c.end);
    // The parser's offsets are the text's: the slice is the comment itself.
    expect(raw, file).toBe(c.type === 'Line' ? `//${c.value}` : `/*${c.value}*/`);
    const first = text.slice(0, c.start).split('\n').length;
    raw.split('\n').forEach((line, i) => {
      const names = namedFiles(line);
      if (names.length > 0) out.push({ where: `${file}:${first + i}`, line: line.trim(), names });
    });
  }
  return out;
}

describe('comments name symbols, not files', () => {
  it('finds file names and code paths in a comment line, and leaves the person’s files and symbols alone', () => {
    expect(namedFiles(' * The SandboxPolicy (sandbox-policy.ts, where the promises are written down)')).toEqual([
      'sandbox-policy.ts',
    ]);
    expect(namedFiles('// see src/core/budget/gates.ts for the gates')).toEqual(['src/core/budget/gates.ts']);
    expect(namedFiles('/** the allow-list (core/telemetry/attributes) */')).toEqual(['core/telemetry/attributes']);
    expect(namedFiles(' * imported as ./format-units.js')).toEqual(['./format-units.js']);
    expect(namedFiles(' * attacks (DESIGN.md, "Where agent-written code may run")')).toEqual(['DESIGN.md']);
    expect(namedFiles(' * the SandboxPolicy ({@link sandboxPolicy}), rendered by {@link bwrapArgs}')).toEqual([]);
    expect(
      namedFiles(' * BACKLOG.md, agents/implementer.md, .loop-worktrees/lessons.md, an AGENTS.md or CLAUDE.md'),
    ).toEqual([]);
    expect(namedFiles(' * e.g. `./run-tests.sh`, `scripts/check.js`, `node tools/x.js`')).toEqual([]);
  });

  it('reads comments only: a file name in a string or a regular expression is not a comment', () => {
    const planted = [
      "const name = 'gates.ts'; // the gates, see gates.ts",
      'const re = /sandbox-policy\\.ts/;',
      '/**',
      ' * The SandboxPolicy ({@link sandboxPolicy}),',
      ' * rendered by sandbox-bwrap.ts.',
      ' */',
      'const t = `// core/untrusted.ts`;',
    ].join('\n');
    expect(commentFindings('planted.ts', planted)).toEqual([
      { where: 'planted.ts:1', line: '// the gates, see gates.ts', names: ['gates.ts'] },
      { where: 'planted.ts:5', line: '* rendered by sandbox-bwrap.ts.', names: ['sandbox-bwrap.ts'] },
    ]);
  });

  it('no comment in src/ names a file of the repository', () => {
    const found = FILES.flatMap((f) => commentFindings(relative(ROOT, f), readFileSync(f, 'utf8')));
    expect(
      found.map((f) => `${f.where}: ${f.line}  (names ${f.names.join(', ')})`),
      'comments that name files; name the symbol ({@link …}) or say it in words',
    ).toEqual([]);
  });
});
