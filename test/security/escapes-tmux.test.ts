import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startModelServer } from '../../src/demo/model-server.js';
import { makeRepo } from '../helpers/git-repo.js';
import { HOSTILE_BACKLOG, hostileScript } from '../helpers/hostile-text.js';
import { CLI, Terminal } from '../helpers/tmux-terminal.js';

/**
 * A real terminal (tmux) running `loopfleet --overnight` while agents print OSC 0 (the title), OSC 52 and
 * `ESC[2J` in their plans, lessons, check output and veto reasons: the pane's title is what it was before,
 * and the sequences are on the screen in their visible form.
 */

const KEY = 'sk-ant-tmux-escapes-0123456789abcdefghijklmnopqrstuvwxyz';
const hasTmux = spawnSync('tmux', ['-V']).status === 0;

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

describe.skipIf(!hasTmux)('agent escape sequences in a real terminal (tmux)', () => {
  it('an OSC 0 title from agent text does not change the pane title', { timeout: 60_000 }, async () => {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
    const { root, cleanup } = await makeRepo({
      'BACKLOG.md': HOSTILE_BACKLOG('true'),
      'check.sh': 'cat out.txt 2>/dev/null\ntest -f ok.txt\n',
    });
    cleanups.push(cleanup);
    const scratch = await mkdtemp(join(tmpdir(), 'loopfleet-tmux-'));
    cleanups.push(() => rm(scratch, { recursive: true, force: true }));
    const server = await startModelServer({ apiKeys: [KEY], script: hostileScript });
    cleanups.push(() => server.close());
    const term = new Terminal();
    cleanups.push(() => term.kill());

    await term.start(root, { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: KEY }, join(scratch, 'exit-code'), [
      '--overnight',
    ]);
    const before = await term.tmux('display', '-p', '-t', 'fleet', '#{pane_title}');
    expect(await term.waitForExit(45_000)).toBe(1); // T-2 failed
    const after = await term.tmux('display', '-p', '-t', 'fleet', '#{pane_title}');
    expect(after).not.toMatch(/PWNED/);
    expect(after).toBe(before);
    // The whole run as the terminal kept it (history included): the sequences shown, not acted on.
    const screen = await term.tmux('capture-pane', '-p', '-J', '-S', '-', '-t', 'fleet');
    expect(screen).toMatch(/^loopfleet: 2 queued task\(s\)/m);
    expect(screen).toMatch(/T-2 attempt 1: reviewer veto: bad ⏎ 12:00:00 T-2 verified ␛\]52;c;cHduZWQ=␇␛\]0;PWNED␇/);
  });
});
