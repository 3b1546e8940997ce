/**
 * The kept parse of a large BACKLOG.md ({@link cachedParse}, {@link keepParse}) answers exactly what the
 * parser answers for the very text it was parsed from, and nothing for any other text: an edit, a text with
 * a problem, an entry for another text or in another shape each go to the parser.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cachedParse, keepParse, PARSE_CACHE_MIN_BYTES } from '../../src/commands/backlog-cache.js';
import { readBacklog, type Repo } from '../../src/commands/repo.js';
import { parseBacklog } from '../../src/core/backlog/parse.js';
import { BACKLOG_PARSE_FILE } from '../../src/domain/layout.js';
import { InputErrors } from '../../src/domain/errors.js';

const FRONT = [
  '---',
  'concurrency: 3',
  'check: "npm test"',
  'review: false',
  'land: merge',
  'discovered: run',
  '---',
  '',
  '# Backlog',
  '',
].join('\n');

/** A backlog over the size limit, with the keys a task can have, parts, `after:` and a Discovered section. */
function bigBacklog(n: number): string {
  const lines = [FRONT];
  for (let i = 1; i <= n; i++) {
    lines.push(`- [${i % 7 === 0 ? 'x' : ' '}] T-${i} Write file ${i}`, `  Put one line into T-${i}.txt.`);
    if (i % 5 === 0) lines.push(`  after: T-${i - 1}`, '  files: src/**', '  priority: high', '  time: 10m');
    if (i % 11 === 0) lines.push('  check: npm run lint', '  setup: npm ci', '  attempts: 2', '  cost: $1.50');
    if (i === 10) lines.push('  split: auto');
  }
  lines.push('- [ ] T-10.1 First part of ten', '  review: true', '');
  lines.push('## Discovered', '', '- [ ] T-900001 A proposal', '  source: todo src/a.ts:3', '');
  return lines.join('\n');
}

describe('the kept parse of a large backlog', () => {
  let dir: string;
  let repo: Repo;
  let text: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'lf-backlog-cache-'));
    repo = {
      root: dir,
      workDir: path.join(dir, '.loop-worktrees'),
      statePath: path.join(dir, '.loop-worktrees', 'state.json'),
      lockPath: path.join(dir, '.loop-worktrees', 'fleet.lock'),
      backlogPath: path.join(dir, 'BACKLOG.md'),
    };
    await mkdir(repo.workDir, { recursive: true });
    text = bigBacklog(2000);
    expect(text.length).toBeGreaterThan(PARSE_CACHE_MIN_BYTES);
    await writeFile(repo.backlogPath, text);
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads back what the parser answers for the same text, and readBacklog takes it', async () => {
    const parsed = parseBacklog(text, repo.backlogPath).backlog;
    expect(await cachedParse(repo.workDir, repo.backlogPath, text)).toBeNull();
    await keepParse(repo.workDir, text, parsed);
    const kept = await cachedParse(repo.workDir, repo.backlogPath, text);
    expect(kept).toEqual(parseBacklog(text, repo.backlogPath).backlog);
    expect(kept?.tasks.find((t) => t.id === 'T-10.1')?.parent).toBe('T-10');
    const read = await readBacklog(repo, false);
    expect(read.kept).toBe(true);
    expect(read.backlog).toEqual(parsed);
  });

  it('answers nothing for an edited text: the edit is parsed', async () => {
    await keepParse(repo.workDir, text, parseBacklog(text, repo.backlogPath).backlog);
    const edited = text.replace('Write file 3\n', 'Write file three\n');
    expect(await cachedParse(repo.workDir, repo.backlogPath, edited)).toBeNull();
    await writeFile(repo.backlogPath, edited);
    try {
      const read = await readBacklog(repo, false);
      expect(read.kept).toBeUndefined();
      expect(read.backlog.tasks.find((t) => t.id === 'T-3')?.title).toBe('Write file three');
    } finally {
      await writeFile(repo.backlogPath, text);
    }
  });

  it('never hides a problem: a text with one is refused although an entry for the text before it is kept', async () => {
    await keepParse(repo.workDir, text, parseBacklog(text, repo.backlogPath).backlog);
    await writeFile(repo.backlogPath, text.replace('  priority: high', '  priority: urgent'));
    try {
      await expect(readBacklog(repo, false)).rejects.toBeInstanceOf(InputErrors);
    } finally {
      await writeFile(repo.backlogPath, text);
    }
  });

  it('does not take an entry planted for another text, a torn file, or another shape', async () => {
    const file = path.join(repo.workDir, BACKLOG_PARSE_FILE);
    const other = `${text}\n- [ ] T-999999 Another\n`;
    await keepParse(repo.workDir, other, parseBacklog(other, repo.backlogPath).backlog);
    // The other text's tasks under this text's key would be a forgery: its key does not match.
    expect(await cachedParse(repo.workDir, repo.backlogPath, text)).toBeNull();
    const entry = JSON.parse(await readFile(file, 'utf8')) as { format: number };
    await writeFile(file, JSON.stringify({ ...entry, format: 0 }));
    expect(await cachedParse(repo.workDir, repo.backlogPath, other)).toBeNull();
    await writeFile(file, '{"format": 1, "key": "');
    expect(await cachedParse(repo.workDir, repo.backlogPath, other)).toBeNull();
  });

  it('keeps nothing for a small backlog', async () => {
    await rm(path.join(repo.workDir, BACKLOG_PARSE_FILE), { force: true });
    const small = bigBacklog(12);
    await keepParse(repo.workDir, small, parseBacklog(small, repo.backlogPath).backlog);
    expect(await cachedParse(repo.workDir, repo.backlogPath, small)).toBeNull();
  });
});
