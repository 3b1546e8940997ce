import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startModelServer } from '../../src/demo/model-server.js';
import { demoScript, type DemoScenario } from '../../src/demo/scripts.js';
import { rowColumns } from '../../src/ui/row-columns.js';
import { backlog } from '../helpers/fleet-harness.js';
import { makeRepo } from '../helpers/git-repo.js';
import { CLI, Terminal, row } from '../helpers/tmux-terminal.js';

/**
 * The task list as a person reads it in an ordinary terminal: at 80×24 and wider, every title shows at
 * least its first 30 characters, whatever the other columns and the annotations (test counts, a failure's
 * reason, a predicted conflict) would like.
 */

const KEY = 'sk-ant-tmux-narrow-0123456789abcdefghijklmnopqrstuvwxyz';
const hasTmux = spawnSync('tmux', ['-V']).status === 0;

const TITLES: Record<string, string> = {
  'T-10': 'Add a slugify helper that handles unicode and emoji',
  'T-11': 'Make the parser accept trailing commas in arrays',
  'T-12': 'Document every public function of the strings module',
};

const SCENARIOS: DemoScenario[] = [
  { taskId: 'T-10', kind: 'pass', edits: [{ path: 'ten.txt', content: 'ten\n' }] },
  {
    taskId: 'T-11',
    kind: 'check-fails',
    edits: [{ path: 'eleven.txt', content: 'eleven\n' }],
    failingEdits: [{ path: 'nope.txt', content: 'x\n' }],
  },
  { taskId: 'T-12', kind: 'pass', edits: [{ path: 'twelve.txt', content: 'twelve\n' }] },
];

const BACKLOG = backlog(
  // The check prints a test summary, so the rows carry test counts beside their titles; T-11's own check
  // fails, so its row carries a reason.
  `check: 'echo "Tests: 3 passed, 3 total"'\nreview: false\nconcurrency: 1\ngates:\n  attempts: 1`,
  Object.entries(TITLES)
    .map(([id, title]) => `- [ ] ${id} ${title}${id === 'T-11' ? '\n  check: test -f eleven.txt' : ''}`)
    .join('\n'),
);

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

describe.skipIf(!hasTmux)('the task list at 80×24, 100×30 and 200×50 (tmux)', () => {
  it('shows at least the first 30 characters of every title at each size', { timeout: 120_000 }, async () => {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
    const { root, cleanup } = await makeRepo({ 'BACKLOG.md': BACKLOG });
    cleanups.push(cleanup);
    const scratch = await mkdtemp(join(tmpdir(), 'loopfleet-narrow-'));
    cleanups.push(() => rm(scratch, { recursive: true, force: true }));
    const server = await startModelServer({
      apiKeys: [KEY],
      script: demoScript(SCENARIOS, { chunkDelayMs: 0, delayMs: 0 }),
    });
    cleanups.push(() => server.close());
    const term = new Terminal({ columns: 80, rows: 24 });
    cleanups.push(() => term.kill());
    await term.start(root, { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: KEY }, join(scratch, 'exit-code'));

    const finished = (s: string) =>
      /✔ verified/.test(row(s, 'T-10')) && /✗ failed/.test(row(s, 'T-11')) && /✔ verified/.test(row(s, 'T-12'));
    for (const [columns, rows] of [
      [80, 24],
      [100, 30],
      [200, 50],
    ] as const) {
      if (columns !== 80) await term.resize(columns, rows);
      // The frame drawn for this size: its header puts the attempt column where this width's layout does.
      const cols = rowColumns(columns, 4, { phase: false });
      const tryAt = cols.marker + cols.id + cols.status + cols.title;
      const drawn = (s: string) => (s.split('\n').find((l) => l.startsWith('  id ')) ?? '').indexOf('try') === tryAt;
      const screen = await term.waitFor(
        (s) => finished(s) && drawn(s),
        `the finished list at ${columns}×${rows}`,
        60_000,
      );
      for (const [id, title] of Object.entries(TITLES)) {
        const line = row(screen, id);
        expect(line.length, `${id} at ${columns} columns`).toBeLessThanOrEqual(columns);
        expect(line, `${id} at ${columns}×${rows}:\n${screen}`).toContain(title.slice(0, 30));
      }
      // Where the whole row fits, so does the whole title.
      if (columns >= 200) for (const [id, title] of Object.entries(TITLES)) expect(row(screen, id)).toContain(title);
    }
    await term.keys('q');
    expect(await term.waitForExit()).toBe(1);
  });
});
