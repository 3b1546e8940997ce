/**
 * `loopfleet audit` (the built CLI, `npm run build` first) on a machine without bubblewrap: its sandbox
 * finding names the cause the host's diagnosis found and the fix, like doctor and the run's first line.
 */
import { existsSync } from 'node:fs';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { backlog } from '../helpers/fleet-harness.js';
import { makeRepo } from '../helpers/git-repo.js';
import { pathWithout } from '../helpers/path-without.js';
import { BIN } from '../helpers/paths.js';

it('runs the built executable (`npm run build` first)', () => {
  expect(existsSync(BIN)).toBe(true);
});

describe('loopfleet audit without bubblewrap', () => {
  it('says why the sandbox cannot run and how to install it', { timeout: 60_000 }, async () => {
    const bin = pathWithout(['bwrap']);
    const repo = await makeRepo({ 'BACKLOG.md': backlog('check: "true"', '- [ ] T-1 One') });
    try {
      const env = { PATH: bin.path, HOME: repo.root, NO_COLOR: '1', ANTHROPIC_API_KEY: 'k' };
      const run = await execa(process.execPath, [BIN, 'audit'], {
        cwd: repo.root,
        env,
        extendEnv: false,
        reject: false,
        timeout: 50_000,
      });
      expect(run.stdout).toMatch(
        /no sandbox \(bubblewrap cannot run here: bubblewrap \(bwrap\) is not installed\): checks of agent-written code will be refused and the agent shell tool off \(fix: install it: (sudo )?apt-get install bubblewrap, or set sandbox: off\)/,
      );
    } finally {
      await repo.cleanup();
      bin.cleanup();
    }
  });
});
