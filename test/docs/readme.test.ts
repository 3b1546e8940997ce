import { existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseBacklog } from '../../src/core/backlog/parse.js';
import { ROOT } from '../helpers/paths.js';

/**
 * The README names files, tests and in-page sections; each must exist. A renamed test or a moved adapter
 * fails here instead of leaving the README pointing at nothing.
 */

const README = await readFile(path.join(ROOT, 'README.md'), 'utf8');

/** The README without its fenced blocks: headings and links there are examples, not the document's. */
function prose(text: string): string {
  return text.replace(/^(`{3,})[^\n]*\n[\s\S]*?^\1[ \t]*$/gm, '');
}

/** GitHub's anchor for a heading: lower case, punctuation other than `-` and `_` dropped, spaces as `-`. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/ /g, '-');
}

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(path.join(ROOT, dir), { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) out.push(entry.name);
  }
  return out;
}

describe('README.md', () => {
  const spans = [...README.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!);

  it('every repository path it names exists', () => {
    const paths = [...new Set(spans.filter((s) => /^(src|test|bench|backlog|agents|\.github)\/[\w./-]+$/.test(s)))];
    expect(paths.length).toBeGreaterThan(20);
    const missing = paths.filter((p) => !existsSync(path.join(ROOT, p.replace(/\/$/, ''))));
    expect(missing).toEqual([]);
  });

  it('every source or test file it names by its bare name exists', async () => {
    const names = [...new Set(spans.filter((s) => /^[\w-]+(\.test)?\.tsx?$/.test(s)))];
    expect(names.length).toBeGreaterThan(5);
    const present = new Set([
      ...(await filesUnder('src')),
      ...(await filesUnder('test')),
      ...(await filesUnder('bench')),
    ]);
    expect(names.filter((n) => !present.has(n))).toEqual([]);
  });

  it('every in-page link leads to a heading or an anchor of the README', () => {
    const text = prose(README);
    const targets = new Set([
      ...[...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchorOf(m[1]!)),
      ...[...text.matchAll(/<a id="([^"]+)"><\/a>/g)].map((m) => m[1]!),
    ]);
    const links = [...text.matchAll(/\]\(#([^)]+)\)/g)].map((m) => m[1]!);
    expect(links.length).toBeGreaterThan(0);
    expect(links.filter((l) => !targets.has(l))).toEqual([]);
  });

  it('names no heading twice at the same level under one parent', () => {
    const seen = new Set<string>();
    const parents: string[] = [];
    const twice: string[] = [];
    for (const m of prose(README).matchAll(/^(#{1,6}) (.+)$/gm)) {
      const level = m[1]!.length;
      parents.length = level - 1;
      const key = `${parents.join(' > ')} > ${m[2]!}`;
      if (seen.has(key)) twice.push(key);
      seen.add(key);
      parents[level - 1] = m[2]!;
    }
    expect(twice).toEqual([]);
  });

  it('says no paragraph twice', () => {
    const paragraphs = README.split(/\n\s*\n/)
      .map((p) => p.trim())
      .filter((p) => p.length > 120);
    expect(paragraphs.filter((p, i) => paragraphs.indexOf(p) !== i)).toEqual([]);
  });

  it('its BACKLOG.md example and the pull-request front matter parse as written', () => {
    const example = README.split('## BACKLOG.md\n\n```markdown\n')[1]!.split('\n```\n')[0]!;
    const { config, tasks } = parseBacklog(example, 'BACKLOG.md').backlog;
    expect(tasks.map((t) => t.id)).toEqual(['T-1', 'T-2', 'T-3']);
    expect([config.land, config.remote, config.forge, config.pr]).toEqual([
      'merge',
      'origin',
      undefined,
      { draft: true, labels: ['loopfleet'], reviewers: [], syncEveryMs: 300_000 },
    ]);
    const prYaml = README.split('## Pull requests: `land: pr`')[1]!.split('```yaml\n')[1]!.split('\n```')[0]!;
    const pr = parseBacklog(`---\ncheck: npm test\n${prYaml}\n---\n- [ ] T-1 x\n`, 'BACKLOG.md').backlog.config;
    expect([pr.land, pr.remote, pr.forge]).toEqual(['pr', 'origin', 'auto']);
  });

  it('anchorOf follows GitHub', () => {
    expect(anchorOf('Discover: `loopfleet discover`')).toBe('discover-loopfleet-discover');
    expect(anchorOf('Notifications: `notify:` and `notify_on:`')).toBe('notifications-notify-and-notify_on');
  });
});
