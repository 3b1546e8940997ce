import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { backlog, runFleet } from '../helpers/fleet-harness.js';
import { git, makeRepo } from '../helpers/git-repo.js';
import { CLI } from '../helpers/paths.js';

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups) await c();
  cleanups = [];
});

describe('with BACKLOG.md gone', () => {
  it('status, merge and discard keep working from state, and nothing recreates the file', {
    timeout: 60_000,
  }, async () => {
    const r = await makeRepo({ 'BACKLOG.md': backlog('check: "true"\nreview: false', '- [ ] T-1 One\n- [ ] T-2 Two') });
    cleanups.push(r.cleanup);
    await runFleet(r.root, ({ role, task }) => (role === 'implementer' ? { edits: { [`${task}.txt`]: 'x\n' } } : {}));
    await rm(join(r.root, 'BACKLOG.md'));
    const cli = (...args: string[]) =>
      execa(process.execPath, [CLI, ...args], { cwd: r.root, reject: false, env: { NO_COLOR: '1' } });

    const status = await cli('status', '--json');
    expect(status.exitCode).toBe(0);
    expect(JSON.parse(status.stdout).map((t: { id: string; status: string }) => [t.id, t.status])).toEqual([
      ['T-1', 'verified'],
      ['T-2', 'verified'],
    ]);

    const merge = await cli('merge', 'T-1');
    expect(merge.exitCode, merge.stderr).toBe(0);
    expect(merge.stdout).toMatch(/T-1 merged/);
    expect(await git(r.root, 'log', '-1', '--format=%s', 'main')).toMatch(/^Merge loop\/T-1/);

    const discard = await cli('discard', 'T-2');
    expect(discard.exitCode, discard.stderr).toBe(0);
    expect(existsSync(join(r.root, 'BACKLOG.md'))).toBe(false);
  });
});
