import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseBacklog } from '../../src/core/backlog/parse.js';
import { ROOT } from '../helpers/paths.js';

/**
 * README.md is the front door: what loopfleet is, how to try it and use it, the credentials, a minimal
 * BACKLOG.md, what verified means, the safety promises, and links to the reference in docs/. It stays
 * short enough to read in a few screens. (Its paths, links and names are checked with every other page in
 * docs.test.ts.)
 */

const README = await readFile(path.join(ROOT, 'README.md'), 'utf8');

/** The text of a `## ` section, up to the next one. */
function section(title: string): string {
  const start = README.indexOf(`\n## ${title}\n`);
  if (start < 0) throw new Error(`README.md has no section '## ${title}'`);
  const next = README.indexOf('\n## ', start + 1);
  return README.slice(start, next < 0 ? undefined : next);
}

describe('README.md', () => {
  it('fits in a few screens', () => {
    expect(README.split('\n').length).toBeLessThanOrEqual(300);
  });

  it('has the front door in order: try it, use it, credentials, a backlog, verified, safety, the docs', () => {
    const titles = [...README.matchAll(/^## (.+)$/gm)].map((m) => m[1]!);
    expect(titles).toEqual([
      'Try it',
      'Use it on your repository',
      'Credentials',
      'A minimal BACKLOG.md',
      'What verified means',
      'Safety and the sandbox',
      'Documentation',
    ]);
  });

  it('tries it with the two commands a fresh machine needs, and says what the demo does', () => {
    const tryIt = section('Try it');
    expect(tryIt).toMatch(/^npm install && npm start +#/m);
    expect(tryIt).toMatch(/^npm test +#/m);
    expect(tryIt).toContain('`npm start` runs `loopfleet demo`');
    expect(tryIt).toContain('scripted demo model');
  });

  it('links every page of docs/ and CONTRIBUTING.md from its Documentation section', async () => {
    const pages = (await readdir(path.join(ROOT, 'docs'))).filter((f) => f.endsWith('.md')).sort();
    expect(pages.length).toBeGreaterThanOrEqual(12);
    const docs = section('Documentation');
    const linked = [...docs.matchAll(/\]\(docs\/([\w-]+\.md)\)/g)].map((m) => m[1]!).sort();
    expect(linked).toEqual(pages);
    expect(docs).toContain('](CONTRIBUTING.md)');
  });

  it('its minimal BACKLOG.md parses as written', () => {
    const example = section('A minimal BACKLOG.md').split('```markdown\n')[1]!.split('\n```\n')[0]!;
    const { backlog, missingIds } = parseBacklog(example, 'BACKLOG.md');
    expect(missingIds).toEqual([]);
    expect(backlog.tasks.map((t) => [t.id, t.done])).toEqual([
      ['T-1', false],
      ['T-2', false],
      ['T-3', true],
    ]);
    expect([backlog.config.check, backlog.config.setup, backlog.config.gates.attempts]).toEqual([
      'npm test',
      'npm ci',
      3,
    ]);
    expect([backlog.config.gates.costUsd, backlog.config.fleetGates.costUsd]).toEqual([2, 25]);
    expect(backlog.tasks[1]!.after).toEqual(['T-1']);
  });

  it('says what verified means and links the full rules', () => {
    const verified = section('What verified means');
    for (const step of ['**The guard**', '**The checks**', '**The reviewer**']) expect(verified).toContain(step);
    expect(verified).toContain('](docs/verification.md)');
  });
});
