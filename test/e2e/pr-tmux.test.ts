import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startModelServer } from '../../src/demo/model-server.js';
import { demoScript } from '../../src/demo/scripts.js';
import { FakeGitHub } from '../helpers/fake-github.js';
import { backlog } from '../helpers/fleet-harness.js';
import { git, makeRepo } from '../helpers/git-repo.js';
import { bareOrigin, remoteHead } from '../helpers/pr-remote.js';
import { CLI, Terminal, row } from '../helpers/tmux-terminal.js';

/** `land: pr` as a team uses it: the built CLI in tmux, a night of three tasks, three PRs on the loopback GitHub. */

const KEY = 'sk-ant-tmux-pr-0123456789abcdefghijklmnopqrstuvwxyz';
const hasTmux = spawnSync('tmux', ['-V']).status === 0;

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

describe.skipIf(!hasTmux)('pull requests in a real terminal (tmux)', () => {
  it('three tasks end as three PRs on the forge, each row showing its PR', { timeout: 180_000 }, async () => {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
    const { root, cleanup } = await makeRepo({
      'BACKLOG.md': backlog(
        'land: pr\nforge: { type: github, repo: acme/widgets }\ncheck: test -f one.txt || test -f two.txt || test -f three.txt\nreview: false\nconcurrency: 3',
        '- [ ] T-1 Write one\n- [ ] T-2 Write two\n- [ ] T-3 Write three',
      ),
    });
    cleanups.push(cleanup);
    const cleanRemote: Array<() => Promise<void>> = [];
    cleanups.push(async () => {
      for (const c of cleanRemote) await c();
    });
    const bare = await bareOrigin(root, cleanRemote);
    const github = await new FakeGitHub('acme/widgets').start();
    cleanups.push(() => github.close());
    const server = await startModelServer({
      apiKeys: [KEY],
      script: demoScript(
        [
          { taskId: 'T-1', kind: 'pass', edits: [{ path: 'one.txt', content: 'one\n' }] },
          { taskId: 'T-2', kind: 'pass', edits: [{ path: 'two.txt', content: 'two\n' }] },
          { taskId: 'T-3', kind: 'pass', edits: [{ path: 'three.txt', content: 'three\n' }] },
        ],
        { chunkDelayMs: 5, delayMs: 20 },
      ),
    });
    cleanups.push(() => server.close());
    const scratch = await mkdtemp(join(tmpdir(), 'loopfleet-tmux-'));
    cleanups.push(() => rm(scratch, { recursive: true, force: true }));
    const term = new Terminal();
    cleanups.push(() => term.kill());
    const exitFile = join(scratch, 'exit-code');
    await term.start(
      root,
      { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: KEY, GH_TOKEN: github.token, GITHUB_API_URL: github.url },
      exitFile,
    );

    const shown = (s: string) => ['T-1', 'T-2', 'T-3'].every((id) => /PR #\d draft/.test(row(s, id)));
    const screen = await term.waitFor(shown, 'every row showing its PR', 120_000);
    for (const id of ['T-1', 'T-2', 'T-3']) expect(row(screen, id)).toMatch(/verified .*PR #[123] draft/);
    expect(github.pulls.map((p) => p.head).sort()).toEqual(['loop/T-1', 'loop/T-2', 'loop/T-3']);
    for (const p of github.pulls) {
      expect(p.body).toContain('Verified by loopfleet in 1 of 3 attempts');
      expect(await remoteHead(bare, p.head)).toBe(await git(root, 'rev-parse', p.head));
    }
    expect(screen).not.toContain(github.token);

    await term.keys('q');
    expect(await term.waitForExit()).toBe(0);
  });
});
