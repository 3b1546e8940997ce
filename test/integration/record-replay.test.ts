import { existsSync } from 'node:fs';
import { cp, mkdtemp, readdir, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startModelServer, type RunningModelServer } from '../../src/demo/model-server.js';
import { demoScript } from '../../src/demo/scripts.js';
import { backlog } from '../helpers/fleet-harness.js';
import { git, makeRepo } from '../helpers/git-repo.js';
import { CLI } from '../helpers/paths.js';
import { statusRows } from '../../src/commands/status.js';
import { findRepo } from '../../src/commands/repo.js';

/**
 * One run with the scripted model, recorded; then replays of it with the model server stopped and no
 * credentials: the same statuses, attempts, tokens and dollars, the same commits' content; a backlog that
 * changed refuses to replay. Tampered and hostile recording files: test/adapters/model/recorded-model.test.ts.
 */

const FRONT = 'check: "! grep -qs UNFINISHED one.txt two.txt three.txt"\nreview: true\ngates:\n  attempts: 2';
const ITEMS = '- [ ] T-1 Write one\n- [ ] T-2 Write two\n- [ ] T-3 Write three';

let server: RunningModelServer | null;
let scratch: string;
let recording: string;
const repos: Array<() => Promise<void>> = [];

function cli(cwd: string, args: string[], model: boolean) {
  const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: '1' };
  delete env.ANTHROPIC_API_KEY;
  delete env.ANTHROPIC_AUTH_TOKEN;
  delete env.ANTHROPIC_BASE_URL;
  if (model) Object.assign(env, { ANTHROPIC_BASE_URL: server!.url, ANTHROPIC_API_KEY: 'sk-test' });
  return execa(process.execPath, [CLI, ...args], { cwd, reject: false, env, extendEnv: false, timeout: 90_000 });
}

async function repo(items = ITEMS): Promise<string> {
  const r = await makeRepo({ 'BACKLOG.md': backlog(FRONT, items) });
  repos.push(r.cleanup);
  return r.root;
}

interface Row {
  id: string;
  status: string;
  attempt: number;
  tokens: number;
  costUsd: number;
  reason: string | null;
}

async function rows(root: string): Promise<Row[]> {
  return ((await statusRows(await findRepo(root))) as unknown as Row[]).map(
    ({ id, status, attempt, tokens, costUsd, reason }) => ({
      id,
      status,
      attempt,
      tokens,
      costUsd,
      reason,
    }),
  );
}

let recorded: Row[];
let recordedRoot: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'loopfleet-record-'));
  recording = join(scratch, 'run-1');
  server = await startModelServer({
    script: demoScript([
      { taskId: 'T-1', kind: 'pass', edits: [{ path: 'one.txt', content: 'one\n' }] },
      { taskId: 'T-2', kind: 'pass-second-attempt', edits: [{ path: 'two.txt', content: 'two\n' }] },
      { taskId: 'T-3', kind: 'veto', edits: [{ path: 'three.txt', content: '3\n' }], vetoReason: 'not three' },
    ]),
  });
  recordedRoot = await repo();
  const run = await cli(recordedRoot, ['--overnight', '--record', recording], true);
  expect(run.stderr).toBe('');
  expect(run.exitCode).toBe(1);
  recorded = await rows(recordedRoot);
  // Nothing is asked of a model from here on.
  await server.close();
  server = null;
}, 120_000);

afterAll(async () => {
  await server?.close();
  for (const cleanup of repos) await cleanup();
  await rm(scratch, { recursive: true, force: true });
});

describe('--record and --replay', () => {
  it('records every agent run of the run, one file each, and the tasks it was given', async () => {
    expect(recorded.map((r) => [r.id, r.status, r.attempt])).toEqual([
      ['T-1', 'verified', 1],
      ['T-2', 'verified', 2],
      ['T-3', 'failed', 2],
    ]);
    const files = (await readdir(recording)).sort();
    expect(files).toContain('manifest.json');
    expect(files).toContain('T-2.a2.implementer.1.json');
    expect(files).toContain('T-3.a2.verifier.1.json');
    // The figures of the run, through the CLI: cost per verified task over everything spent.
    const summary = JSON.parse((await cli(recordedRoot, ['status', '--json', '--summary'], false)).stdout);
    const spent = recorded.reduce((sum, r) => sum + r.costUsd, 0);
    expect(summary).toMatchObject({ tasks: 3, verified: 2, merged: 0, costPerMerged: null });
    expect(summary.costPerVerified).toBeCloseTo(spent / 2, 5);
    // explorer, implementer and (after a passing check) reviewer: T-1 3, T-2 2 + 3, T-3 3 + 3
    expect(files.filter((f) => f !== 'manifest.json')).toHaveLength(14);
  });

  it('replays with the model server stopped and no credentials: same statuses, attempts, tokens and cost', async () => {
    const root = await repo();
    const run = await cli(root, ['--overnight', '--replay', recording], false);
    expect(run.stderr).toBe('');
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toMatch(/done: 2 verified, 0 merged, 1 failed/);
    expect(await rows(root)).toEqual(recorded);
    for (const [id, file] of [
      ['T-1', 'one.txt'],
      ['T-2', 'two.txt'],
    ]) {
      expect(await git(root, 'show', `loop/${id}:${file}`)).toBe(await git(recordedRoot, 'show', `loop/${id}:${file}`));
    }
  });

  it('refuses a changed backlog and a linked manifest before anything is written', async () => {
    const root = await repo(ITEMS.replace('Write two', 'Write twenty'));
    const changed = await cli(root, ['--overnight', '--replay', recording], false);
    expect(changed.exitCode).toBe(2);
    expect(changed.stderr).toMatch(
      /--replay .*run-1: the backlog is not the recorded run's: T-2 changed since the recording/,
    );
    const linked = join(scratch, 'linked');
    await cp(recording, linked, { recursive: true });
    await rm(join(linked, 'manifest.json'));
    await symlink(join(recording, 'manifest.json'), join(linked, 'manifest.json'));
    const link = await cli(root, ['--overnight', '--replay', linked], false);
    expect(link.exitCode).toBe(2);
    expect(link.stderr).toMatch(/manifest\.json is a link: refused/);
    expect(existsSync(join(root, '.loop-worktrees'))).toBe(false);
  });
});
