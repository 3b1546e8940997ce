import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startModelServer } from '../../src/demo/model-server.js';
import { demoScript } from '../../src/demo/scripts.js';
import { FakeLinear } from '../helpers/fake-linear.js';
import { backlog } from '../helpers/fleet-harness.js';
import { makeRepo } from '../helpers/git-repo.js';
import { CLI, Terminal } from '../helpers/tmux-terminal.js';
import { linearStatusComments } from '../helpers/tracker-linear.js';
import { eventually } from '../helpers/wait.js';

/**
 * Tracker tasks as a person watches them: the built CLI in tmux, a Linear issue (the loopback Linear) run
 * beside a task written in BACKLOG.md, each in its own row of the same list.
 */

const KEY = 'sk-ant-tmux-tracker-0123456789abcdefghijklmnopqrstuvwxyz';
const hasTmux = spawnSync('tmux', ['-V']).status === 0;

const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe.skipIf(!hasTmux)('tracker tasks in a real terminal (tmux)', () => {
  it('lists a Linear issue beside a BACKLOG.md task, runs both, and the issue hears back', {
    timeout: 120_000,
  }, async () => {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
    const linear = await new FakeLinear().start();
    cleanups.push(() => linear.close());
    const alice = linear.addUser('alice', true);
    linear.addIssue('Say goodbye', 'Write goodbye.txt.', alice, ['loopfleet']);
    const { root, cleanup } = await makeRepo({
      'BACKLOG.md': backlog(
        'check: "true"\nreview: false\nconcurrency: 2\ntracker: { type: linear, team: ENG, label: loopfleet, states: { verified: In Review } }',
        '- [ ] T-1 Say hello',
      ),
    });
    cleanups.push(cleanup);
    const scratch = await mkdtemp(join(tmpdir(), 'loopfleet-tmux-'));
    cleanups.push(() => rm(scratch, { recursive: true, force: true }));
    const script = demoScript(
      [
        { taskId: 'T-1', kind: 'pass', edits: [{ path: 'hello.txt', content: 'hello\n' }] },
        { taskId: 'ENG-1', kind: 'pass', edits: [{ path: 'goodbye.txt', content: 'goodbye\n' }] },
      ],
      { chunkDelayMs: 5, delayMs: 20 },
    );
    const server = await startModelServer({ apiKeys: [KEY], script });
    cleanups.push(() => server.close());
    const term = new Terminal();
    cleanups.push(() => term.kill());
    await term.start(
      root,
      {
        ANTHROPIC_BASE_URL: server.url,
        ANTHROPIC_API_KEY: KEY,
        LINEAR_API_KEY: linear.key,
        LINEAR_API_URL: linear.url,
      },
      join(scratch, 'exit-code'),
    );

    const row = (screen: string, id: string) =>
      screen.split('\n').find((l) => new RegExp(`^[› ] ${id} `).test(l)) ?? '';
    const screen = await term.waitFor(
      (s) => /✔ verified/.test(row(s, 'T-1')) && /✔ verified/.test(row(s, 'ENG-1')),
      'T-1 and ENG-1 verified, each in its row',
      60_000,
    );
    expect(row(screen, 'T-1')).toMatch(/Say hello/);
    expect(row(screen, 'ENG-1')).toMatch(/Say goodbye/);
    // The issue shows it without anyone opening loopfleet: its state and its one comment.
    await eventually(() => (linear.stateOf('ENG-1') === 'In Review' ? true : undefined));
    const comments = await eventually(() => {
      const c = linearStatusComments(linear, 'ENG-1');
      return c.length === 1 && c[0]!.includes('| status | verified |') ? c : undefined;
    });
    expect(comments).toHaveLength(1);

    await term.keys('q');
    expect(await term.waitForExit()).toBe(0);
  });
});
