import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startModelServer, type RunningModelServer } from '../../src/demo/model-server.js';
import { demoScript } from '../../src/demo/scripts.js';
import { backlog } from '../helpers/fleet-harness.js';
import { git, makeRepo } from '../helpers/git-repo.js';
import { readState } from '../helpers/state-file.js';
import { CLI } from '../helpers/paths.js';

const KEY = 'sk-ant-sentinel-0123456789abcdefghijklmnopqrstuvwxyz';

let server: RunningModelServer;
beforeAll(async () => {
  server = await startModelServer({
    apiKeys: [KEY],
    script: demoScript([
      { taskId: 'T-1', kind: 'pass', edits: [{ path: 'one.txt', content: '1\n' }] },
      { taskId: 'T-2', kind: 'pass', edits: [{ path: 'two.txt', content: '2\n' }] },
    ]),
  });
});
afterAll(async () => server.close());

describe('under `ulimit -n 32`', () => {
  it('--overnight stops in one line naming the limit: no stack trace, no attempt charged, no orphan worktree, a report, exit 1', {
    timeout: 60_000,
  }, async () => {
    const { root, cleanup } = await makeRepo({
      'BACKLOG.md': backlog(
        'check: test -f one.txt || test -f two.txt\nconcurrency: 2',
        '- [ ] T-1 One\n- [ ] T-2 Two',
      ),
    });
    try {
      const run = await execa('bash', ['-c', `ulimit -n 32; exec "${process.execPath}" "${CLI}" --overnight`], {
        cwd: root,
        reject: false,
        env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: KEY, NO_COLOR: '1' },
        timeout: 50_000,
      });
      const all = `${run.stdout}\n${run.stderr}`;
      expect(all).not.toMatch(/\n\s+at |TypeError|Unhandled/);
      expect(
        run.stdout.split('\n').filter((l) => l.includes('too many open files (EMFILE)') && l.includes('ulimit -n')),
      ).toHaveLength(1);
      expect(run.exitCode, all).toBe(1);
      const state = await readState(root);
      for (const id of ['T-1', 'T-2']) {
        expect(state.tasks[id].status, id).toBe('queued');
        expect(
          state.tasks[id].attempts
            .map((a: { outcome: string }) => a.outcome)
            .filter((o: string) => o !== 'interrupted'),
          id,
        ).toEqual([]);
      }
      // every worktree left belongs to a task that resumes on the next start (its attempt restarts there)
      const trees = (await git(root, 'worktree', 'list', '--porcelain'))
        .split('\n')
        .filter((l) => l.startsWith('worktree '))
        .map((l) => l.slice(9));
      for (const tree of trees.slice(1))
        expect(['T-1', 'T-2'].map((id) => join(root, '.loop-worktrees', id))).toContain(tree);
      expect(await readdir(join(root, '.loop-worktrees', 'reports'))).toHaveLength(1);
    } finally {
      await cleanup();
    }
  });
});
