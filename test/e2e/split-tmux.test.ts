import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startModelServer, type Script } from '../../src/demo/model-server.js';
import { demoScript } from '../../src/demo/scripts.js';
import { backlog } from '../helpers/fleet-harness.js';
import { makeRepo, read } from '../helpers/git-repo.js';
import { CLI, Terminal } from '../helpers/tmux-terminal.js';

/** A split task as a person watches it: the built CLI in tmux, the parts under their task, paced to one review. */

const KEY = 'sk-ant-tmux-split-0123456789abcdefghijklmnopqrstuvwxyz';
const hasTmux = spawnSync('tmux', ['-V']).status === 0;

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

const PARTS = [
  { title: 'Say hello', files: ['hello.txt'] },
  { title: 'Say something else', files: ['other.txt'] },
];

describe.skipIf(!hasTmux)('a split task in a real terminal (tmux)', () => {
  it('shows the parts under their task and the fleet waiting for review', { timeout: 120_000 }, async () => {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
    const { root, cleanup } = await makeRepo({
      'BACKLOG.md': backlog(
        'check: "true"\nreview: true\nconcurrency: 2\nreview_capacity: 1',
        '- [ ] T-1 Say two things\n  split: auto\n- [ ] T-2 Later',
      ),
    });
    cleanups.push(cleanup);
    const scratch = await mkdtemp(join(tmpdir(), 'loopfleet-tmux-'));
    cleanups.push(() => rm(scratch, { recursive: true, force: true }));
    const parts = demoScript(
      [
        { taskId: 'T-1.1', kind: 'pass', edits: [{ path: 'hello.txt', content: 'hello\n' }] },
        { taskId: 'T-1.2', kind: 'pass', edits: [{ path: 'other.txt', content: 'other\n' }] },
      ],
      { chunkDelayMs: 5, delayMs: 20 },
    );
    const script: Script = (req) =>
      req.role === 'explorer' && req.taskId === 'T-1'
        ? { text: `Two parts.\n\n\`\`\`parts\n${JSON.stringify(PARTS)}\n\`\`\`\n` }
        : parts(req);
    const server = await startModelServer({ apiKeys: [KEY], script });
    cleanups.push(() => server.close());
    const term = new Terminal();
    cleanups.push(() => term.kill());
    await term.start(root, { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: KEY }, join(scratch, 'exit-code'));

    const screen = await term.waitFor(
      (s) => /└ T-1\.1 +✔ verified/.test(s) && /waiting for review: 1 of 1/.test(s),
      'T-1.1 verified under T-1, and the fleet waiting for review',
      60_000,
    );
    const lines = screen.split('\n');
    const at = (pattern: RegExp) => lines.findIndex((l) => pattern.test(l));
    // T-1, then its parts right under it, then T-2; the second part and T-2 wait for the one review.
    expect(at(/^[› ] T-1 /)).toBeGreaterThanOrEqual(0);
    expect(at(/^[› ] └ T-1\.1 /)).toBe(at(/^[› ] T-1 /) + 1);
    expect(lines[at(/^[› ] └ T-1\.2 /)]).toMatch(/queued/);
    expect(at(/^[› ] T-2 /)).toBe(at(/^[› ] └ T-1\.2 /) + 1);
    expect(await read(root, 'BACKLOG.md')).toContain(
      '- [ ] T-1.1 Say hello\n  Part of T-1. Planned files: hello.txt\n',
    );

    // Quit with T-1's second part not run: the run ends unfinished, as any quit with work left does.
    await term.keys('q');
    expect(await term.waitForExit()).toBe(130);
  });
});
