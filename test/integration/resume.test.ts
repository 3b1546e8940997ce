import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { startModelServer, type RunningModelServer } from '../../src/demo/model-server.js';
import { demoScript } from '../../src/demo/scripts.js';
import type { StateData } from '../../src/ports/state-store.js';
import { backlog } from '../helpers/fleet-harness.js';
import { git, makeRepo } from '../helpers/git-repo.js';
import { readState } from '../helpers/state-file.js';
import { CLI } from '../helpers/paths.js';

const KEY = 'resume-test-key';
let server: RunningModelServer | null = null;
let cleanup: (() => Promise<void>) | null = null;
afterEach(async () => {
  await server?.close();
  await cleanup?.();
});

async function state(root: string): Promise<StateData | null> {
  try {
    return (await readState(root)) as StateData;
  } catch {
    return null;
  }
}

describe('crash resume', () => {
  it('after kill -9 mid-run, a new start takes over the lock, restarts the interrupted attempts and finishes like an uninterrupted run', {
    timeout: 120_000,
  }, async () => {
    const ids = ['T-1', 'T-2', 'T-3'];
    server = await startModelServer({
      apiKeys: [KEY],
      script: demoScript(
        ids.map((id) => ({ taskId: id, kind: 'pass' as const, edits: [{ path: `${id}.txt`, content: `${id}\n` }] })),
        { chunkDelayMs: 20, delayMs: 50 },
      ),
    });
    const repo = await makeRepo({
      'BACKLOG.md': backlog(
        'check: test -n "$(ls T-*.txt)"\nconcurrency: 2',
        ids.map((id) => `- [ ] ${id} Write ${id}.txt`).join('\n'),
      ),
    });
    cleanup = repo.cleanup;
    const env = { ...process.env, ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: KEY };

    const first = execa(process.execPath, [CLI, '--overnight'], { cwd: repo.root, env, reject: false });
    // Kill it the moment an implementer is at work: worktrees exist, commits may or may not.
    for (;;) {
      const s = await state(repo.root);
      if (s !== null && Object.values(s.tasks).some((t) => t.status === 'running' && t.phase === 'implement')) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    first.kill('SIGKILL');
    await first;
    expect(existsSync(join(repo.root, '.loop-worktrees', 'fleet.lock'))).toBe(true); // left behind by the dead process
    const crashed = (await state(repo.root))!;
    const interruptedIds = Object.values(crashed.tasks)
      .filter((t) => t.status === 'running')
      .map((t) => t.id);
    expect(interruptedIds.length).toBeGreaterThan(0);

    const second = await execa(process.execPath, [CLI, '--overnight'], { cwd: repo.root, env, reject: false });
    expect(second.stderr).toBe('');
    expect(second.exitCode).toBe(0);
    const done = (await state(repo.root))!;
    for (const id of ids) expect(done.tasks[id]!.status).toBe('verified');
    for (const id of interruptedIds) {
      const outcomes = done.tasks[id]!.attempts.map((a) => a.outcome);
      expect(outcomes).toContain('interrupted');
      expect(outcomes.at(-1)).toBe('verified');
      // the attempt was restarted, not counted against the task
      expect(done.tasks[id]!.attempt).toBe(1);
    }
    for (const id of ids) expect(await git(repo.root, 'show', `loop/${id}:${id}.txt`)).toBe(id);
    const worktrees = await git(repo.root, 'worktree', 'list', '--porcelain');
    expect(worktrees).not.toContain('prunable');
    expect(existsSync(join(repo.root, '.loop-worktrees', 'fleet.lock'))).toBe(false);
    expect(await git(repo.root, 'status', '--porcelain')).toBe('');
  });
});
