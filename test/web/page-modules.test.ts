import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PAGE_ASSETS, PAGE_MODULES } from '../../src/web/page/assets.js';
import { formatDuration, formatTokens, formatUsd } from '../../src/core/text/format-units.js';
import { HOSTILE, UNSAFE } from '../helpers/hostile-text.js';
import { ROOT } from '../helpers/paths.js';

/**
 * The page's browser modules: their source against the rules that keep fleet text inert: no API that parses a string as HTML or
 * runs one as code, no inline script or style (the Content-Security-Policy would refuse them), nothing
 * loaded from another origin, and every module a module imports is one the server serves. Then the modules
 * that need no document, loaded in Node as the browser loads them (each import a `data:` module).
 */

const PAGE_DIR = path.join(ROOT, 'src/web/page');

/** Built from parts, so that this file does not match its own rule. */
const FORBIDDEN: readonly string[] = [
  ['inner', 'HTML'],
  ['outer', 'HTML'],
  ['insertAdjacent', 'HTML'],
  ['document', '.write'],
  ['ev', 'al('],
  ['new ', 'Function'],
  ['createContextual', 'Fragment'],
  ['set', 'HTMLUnsafe'],
  ['parseHTML', 'Unsafe'],
  ['DOM', 'Parser'],
].map((parts) => parts.join(''));

function forbiddenIn(text: string): string[] {
  return FORBIDDEN.filter((word) => text.includes(word));
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => path.join(e.parentPath, e.name));
}

describe('the page source', () => {
  it('uses no API that turns text into HTML or code', () => {
    const files = sourceFiles(PAGE_DIR);
    expect(files.length).toBeGreaterThanOrEqual(12);
    const found = files.flatMap((f) =>
      forbiddenIn(readFileSync(f, 'utf8')).map((w) => `${path.relative(ROOT, f)}: ${w}`),
    );
    expect(found).toEqual([]);
    // and what is served, as served
    expect(Object.values(PAGE_ASSETS).flatMap((a) => forbiddenIn(a.body))).toEqual([]);
  });

  it('would catch each forbidden API planted in a module', () => {
    for (const word of FORBIDDEN) expect(forbiddenIn(`node.x = 1; ${word} something`)).toEqual([word]);
  });

  it('has no inline script, inline style, event-handler attribute or other origin in its document', () => {
    const INDEX_HTML = PAGE_ASSETS['/']!.body;
    expect(INDEX_HTML).toContain('<link rel="modulepreload" href="/assets/dom.js">');
    expect(INDEX_HTML).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
    expect(INDEX_HTML).not.toMatch(/<style|\sstyle=/);
    expect(INDEX_HTML).not.toMatch(/\son[a-z]+=/i);
    for (const m of INDEX_HTML.matchAll(/\s(?:src|href)="([^"]*)"/g))
      expect(m[1]).toMatch(/^(\/assets\/[\w.-]+|data:,)$/);
    for (const asset of Object.values(PAGE_ASSETS))
      expect(asset.body).not.toMatch(/https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
  });

  it('serves every module a module imports, and the document and its stylesheet', () => {
    expect(PAGE_ASSETS['/']?.type).toMatch(/^text\/html/);
    expect(PAGE_ASSETS['/assets/page.css']?.type).toMatch(/^text\/css/);
    for (const [name, body] of Object.entries(PAGE_MODULES)) {
      expect(PAGE_ASSETS[`/assets/${name}`]?.type).toMatch(/^text\/javascript/);
      for (const m of body.matchAll(/^import .* from '([^']+)';$/gm)) {
        expect(m[1], `${name} imports ${m[1]}`).toMatch(/^\.\/[\w-]+\.js$/);
        expect(Object.keys(PAGE_MODULES), `${name} imports ${m[1]}`).toContain(m[1]!.slice(2));
      }
    }
  });
});

/** A page module as an ES module Node can import, its imports rewritten to `data:` modules of their own. */
function dataUrl(name: string): string {
  const body = PAGE_MODULES[name]!.replace(/from '\.\/([\w-]+\.js)';/g, (_m, dep: string) => `from '${dataUrl(dep)}';`);
  return `data:text/javascript;base64,${Buffer.from(body).toString('base64')}`;
}

interface DomModule {
  clean(text: unknown): string;
  line(text: unknown): string;
  safeHttpUrl(text: unknown): string | null;
}
interface FormatModule {
  tokens(n: number): string;
  usd(n: number): string;
  duration(ms: number): string;
  meter(ratio: number): string;
}
interface DiffModule {
  parseDiff(
    text: string,
  ): Array<{ name: string; added: number; removed: number; lines: Array<{ kind: string; text: string }> }>;
}
interface ModelModule {
  normalise(src: unknown, previous: unknown, now: number): Record<string, unknown>;
  FleetModel: new () => {
    reset(rows: unknown[], now: number): void;
    apply(task: unknown, now: number): boolean;
    counts: Record<string, number>;
    get(id: string): Record<string, unknown> | undefined;
  };
}

const dom = (await import(dataUrl('dom.js'))) as DomModule;
const format = (await import(dataUrl('format.js'))) as FormatModule;
const diff = (await import(dataUrl('diff.js'))) as DiffModule;
const model = (await import(dataUrl('model.js'))) as ModelModule;

describe('what the page shows of fleet text', () => {
  it('drops colour and cursor sequences, shows string sequences and pictures every other control', () => {
    const shown = dom.clean(`a\u001b[31mred\u001b[0m b ${HOSTILE} \u0007 \u009b2J`);
    expect(UNSAFE.exec(shown)).toBeNull();
    expect(shown).toContain('ared b');
    expect(shown).toContain('\u241b]52;c;cHduZWQ=');
    expect(shown).toContain('\u241b]8;;https://evil.example/');
    expect(shown).toContain('\u2407');
    expect(shown).not.toContain('2J');
    expect(dom.clean('one\r\ntwo\tthree')).toBe('one\ntwo\tthree');
    expect(dom.line('one\n\ntwo')).toBe('one \u23ce two');
    expect(dom.clean(null)).toBe('');
  });

  it('makes a link of http: and https: URLs only', () => {
    expect(dom.safeHttpUrl('https://github.com/o/r/pull/7')).toBe('https://github.com/o/r/pull/7');
    expect(dom.safeHttpUrl('http://gitlab.local/x')).toBe('http://gitlab.local/x');
    for (const bad of [
      'javascript:alert(1)',
      ' javascript:alert(1)',
      'JaVaScRiPt:alert(1)',
      'data:text/html,<script>',
      '//evil.example',
      '/relative',
      'vbscript:x',
      42,
      null,
    ]) {
      expect(dom.safeHttpUrl(bad), String(bad)).toBeNull();
    }
  });

  it('writes tokens, dollars and durations as the terminal view and the report do', () => {
    for (const n of [0, 512, 1500, 12_345, 999_999, 1_234_567, 25_000_000])
      expect(format.tokens(n)).toBe(formatTokens(n));
    for (const x of [0, 0.004, 0.00001, 0.42, 12.345]) expect(format.usd(x)).toBe(formatUsd(x));
    for (const ms of [0, 500, 42_000, 185_000, 3_720_000]) expect(format.duration(ms)).toBe(formatDuration(ms));
    expect(format.meter(0.5)).toBe('\u25ae\u25ae\u25ae\u25af\u25af');
  });

  it('reads a unified diff into files and kinds of line', () => {
    const files = diff.parseDiff(
      'diff --git a/a.txt b/a.txt\nindex 1..2 100644\n--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n same\n-old\n+new <b>\n' +
        'diff --git a/b.txt b/b.txt\nnew file mode 100644\n--- /dev/null\n+++ b/b.txt\n@@ -0,0 +1 @@\n+\u001b]0;x\u0007b\n',
    );
    expect(files.map((f) => [f.name, f.added, f.removed])).toEqual([
      ['a.txt', 1, 1],
      ['b.txt', 1, 0],
    ]);
    expect(files[0]!.lines.map((l) => l.kind)).toEqual(['meta', 'meta', 'meta', 'meta', 'hunk', 'ctx', 'del', 'add']);
    expect(files[1]!.lines.at(-1)!.text).toBe('+\u241b]0;x\u2407b');
  });

  it('keeps one row per task: a task event changes that row and the counts, an unknown id asks for the list', () => {
    const fleet = new model.FleetModel();
    fleet.reset(
      [
        { id: 'T-1', title: 'a', status: 'queued', tokens: 0, costUsd: 0, attempt: 0, maxAttempts: 3 },
        { id: 'T-2', title: 'b', status: 'running', tokens: 10, costUsd: 0.1, attempt: 1, maxAttempts: 3 },
      ],
      0,
    );
    expect(fleet.counts).toEqual({ queued: 1, running: 1 });
    expect(
      fleet.apply({ id: 'T-1', status: 'running', usage: { input: 5, output: 5, cacheWrite: 0, cacheRead: 2 } }, 1),
    ).toBe(true);
    expect(fleet.counts).toEqual({ queued: 0, running: 2 });
    expect(fleet.get('T-1')).toMatchObject({ title: 'a', status: 'running', tokens: 12 });
    expect(fleet.apply({ id: 'T-9', status: 'running' }, 1)).toBe(false);
  });
});
