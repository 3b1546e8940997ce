import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PAGE_ASSETS, PAGE_MODULES } from '../../src/web/page/assets.js';
import { INDEX_HTML } from '../../src/web/page/html.js';
import { ROOT } from '../helpers/paths.js';

/**
 * The page's source against the rules that keep fleet text inert: no API that parses a string as HTML or
 * runs one as code, no inline script or style (the Content-Security-Policy would refuse them), nothing
 * loaded from another origin, and every module a module imports is one the server serves.
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
