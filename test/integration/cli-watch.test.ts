import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LowdbStateStore } from '../../src/adapters/store/lowdb-state.js';
import { startModelServer, type RunningModelServer } from '../../src/demo/model-server.js';
import { demoScript } from '../../src/demo/scripts.js';
import { backlog } from '../helpers/fleet-harness.js';
import { makeRepo, read } from '../helpers/git-repo.js';
import { eventually } from '../helpers/wait.js';
import { CLI } from '../helpers/paths.js';

const KEY = 'sk-ant-watch-0123456789abcdefghijklmnopqrstuvwxyz';

let server: RunningModelServer;
beforeAll(async () => {
  // Nothing is scripted: every implementer changes nothing.
  server = await startModelServer({ apiKeys: [KEY], script: demoScript([]) });
});
afterAll(async () => server.close());

function cli(cwd: string, args: string[]) {
  return execa(process.execPath, [CLI, ...args], {
    cwd,
    reject: false,
    env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: KEY, NO_COLOR: '1' },
    extendEnv: true,
    timeout: 150_000,
  });
}

type Row = {
  id: string;
  status: string;
  nextRun?: string | null;
  runs?: Array<{ outcome: string; costUsd: number; tokens: number; startedAt: string; endedAt: string }>;
};

/** The fleet's state as `status` reads it (state.json, which the first fold writes, and its journal). */
async function stateOf(root: string) {
  return (await new LowdbStateStore(join(root, '.loop-worktrees', 'state.json')).load()) ?? undefined;
}

async function status(root: string): Promise<Row[]> {
  const run = await cli(root, ['status', '--json']);
  expect(run.exitCode, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as Row[];
}

describe('loopfleet --watch', () => {
  it('runs an every: 2s task again and again, keeps its runs, notifies only notify_on and one summary', {
    timeout: 150_000,
  }, async () => {
    const box = await mkdtemp(join(tmpdir(), 'loopfleet-watch-'));
    const notified = join(box, 'notified.jsonl');
    const { root, cleanup } = await makeRepo({
      'BACKLOG.md': backlog(
        `check: "true"\ngates:\n  attempts: 1\nnotify: sh -c 'cat >> ${notified}; echo >> ${notified}'\nnotify_on: [failed, summary]\ndiscover: { every: 1d, only: [todo] }`,
        '- [ ] T-1 Sweep the logs\n  every: 2s\n- [ ] T-2 Once, changing nothing',
      ),
      'src/tidy.js': 'export function tidy() {\n  // TODO: handle empty input\n  return 1;\n}\n',
    });
    try {
      // A bound far beyond the test's own: the signal, not the clock, ends this run.
      const soon = new Date(Date.now() + 10 * 60_000);
      const until = `${String(soon.getHours()).padStart(2, '0')}:${String(soon.getMinutes()).padStart(2, '0')}`;
      const watching = cli(root, ['--watch', '--until', until]);
      // Both before the signal, in whatever order a loaded machine brings them: two runs of T-1, and the
      // start's discover having written its proposal. Read from the state file: no process per look.
      await eventually(async () => {
        const runs = (await stateOf(root))?.tasks['T-1']?.runs?.length ?? 0;
        return runs >= 2 && (await read(root, 'BACKLOG.md')).includes('## Discovered') ? true : undefined;
      }, 200);
      watching.kill('SIGTERM');
      const run = await watching;
      expect(run.exitCode, run.stdout + run.stderr).toBe(130);
      expect(run.stdout).toContain('stopping: SIGTERM');

      const rows = await status(root);
      const t1 = rows[0]!;
      expect(t1.id).toBe('T-1');
      expect(t1.runs!.length).toBeGreaterThanOrEqual(2);
      expect(t1.runs!.slice(0, 2).map((r) => r.outcome)).toEqual(['unchanged', 'unchanged']);
      for (const r of t1.runs!) expect(r.costUsd).toBeGreaterThan(0);
      // The second run started no sooner than two seconds after the first ended.
      expect(Date.parse(t1.runs![1]!.startedAt) - Date.parse(t1.runs![0]!.endedAt)).toBeGreaterThanOrEqual(2000);
      expect(rows[1]).toMatchObject({ id: 'T-2', status: 'failed' });
      expect(rows[1]).not.toHaveProperty('nextRun');
      // Waiting for its next run; or stopped during a third run, which then resumes at the next start.
      if (t1.nextRun != null) expect(Date.parse(t1.nextRun)).toBeGreaterThan(Date.parse(t1.runs!.at(-1)!.endedAt));
      else expect(t1.status).toBe('queued');
      const file = await read(root, 'BACKLOG.md');
      expect(file).toContain('- [ ] T-1 Sweep the logs');
      // discover: ran once at the start, proposing the TODO (held under ## Discovered, not run)
      expect(file).toContain('## Discovered');
      expect(file).toContain('source: todo src/tidy.js:2');
      expect(rows.map((r) => r.id)).toEqual(['T-1', 'T-2']);

      const reports = await readdir(join(root, '.loop-worktrees', 'reports'));
      expect(reports).toHaveLength(1);
      const payloads = (await readFile(notified, 'utf8'))
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(payloads.map((p) => `${String(p.event)}:${String(p.status ?? '')}`)).toEqual([
        'status:failed',
        'summary:',
      ]);
      expect(payloads[0]).toMatchObject({ id: 'T-2' });
      expect(payloads[1]).toMatchObject({
        exitCode: 130,
        reportPath: join(root, '.loop-worktrees', 'reports', reports[0]!),
      });
      expect(payloads[1]!.costUsd).toBeGreaterThan(0);
    } finally {
      await cleanup();
      await rm(box, { recursive: true, force: true });
    }
  });

  it('ends with exit 1 on a fleet gate, notifying the gate and the summary; refuses bad usage with exit 2', {
    timeout: 90_000,
  }, async () => {
    const box = await mkdtemp(join(tmpdir(), 'loopfleet-watch-'));
    const notified = join(box, 'notified.jsonl');
    const { root, cleanup } = await makeRepo({
      'BACKLOG.md': backlog(
        `check: "true"\ngates:\n  fleet_tokens: 1\nnotify: sh -c 'cat >> ${notified}; echo >> ${notified}'\nnotify_on: [gate, summary]`,
        '- [ ] T-1 Sweep\n  every: 2s',
      ),
    });
    try {
      const run = await cli(root, ['--watch']);
      expect(run.exitCode, run.stdout + run.stderr).toBe(1);
      expect(run.stdout).toContain('stopping: a fleet gate');
      const payloads = (await readFile(notified, 'utf8'))
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(payloads.map((p) => p.event)).toEqual(['gate', 'summary']);
      expect(payloads[0]).toMatchObject({ scope: 'fleet', gate: 'fleet_tokens' });
      expect(payloads[1]).toMatchObject({ exitCode: 1 });

      const bad = await cli(root, ['--watch', '--until', '25:00']);
      expect(bad.exitCode).toBe(2);
      expect(bad.stderr).toContain("--until: '25:00' is not a time of day");
      expect((await cli(root, ['--until', '07:00'])).stderr).toContain(
        '--until is an option of `loopfleet --watch` only',
      );
      expect((await cli(root, ['--watch', '--overnight'])).exitCode).toBe(2);
      expect((await cli(root, ['--help'])).stdout).toContain('--watch [--until HH:MM[:SS]]');
    } finally {
      await cleanup();
      await rm(box, { recursive: true, force: true });
    }
  });

  it('stops by itself at --until HH:MM:SS, not before, with the exit code --overnight would give', {
    timeout: 300_000,
  }, async () => {
    // A time of day is a wall clock by nature. So that a loaded machine makes this slower, never wrong, a try
    // whose one run had not ended by then (or whose time had passed before the command read it, meaning
    // tomorrow) is thrown away and made again with twice the margin.
    for (let margin = 4_000; margin <= 128_000; margin *= 2) {
      const { root, cleanup } = await makeRepo({
        'BACKLOG.md': backlog('check: "true"', '- [ ] T-1 Sweep\n  every: 1d'),
      });
      try {
        const at = new Date(Math.ceil((Date.now() + margin) / 1000) * 1000);
        const hhmmss = [at.getHours(), at.getMinutes(), at.getSeconds()]
          .map((n) => String(n).padStart(2, '0'))
          .join(':');
        const watching = cli(root, ['--watch', '--until', hhmmss]);
        let printed = '';
        watching.stdout?.on('data', (chunk: Buffer) => {
          printed += chunk.toString();
        });
        const announced = await eventually(() => /watching until (.+)/.exec(printed)?.[1]);
        if (Date.parse(announced) !== at.getTime()) {
          watching.kill('SIGTERM');
          await watching;
          continue;
        }
        const run = await watching;
        const ended = Date.now();
        const [row] = await status(root);
        if ((row!.runs ?? []).length === 0) continue;
        expect(run.exitCode, run.stdout + run.stderr).toBe(0);
        expect(run.stdout).toContain(`stopping: --until ${hhmmss}`);
        expect(ended).toBeGreaterThanOrEqual(at.getTime());
        expect(row!.runs!.map((r) => r.outcome)).toEqual(['unchanged']);
        expect(await readdir(join(root, '.loop-worktrees', 'reports'))).toHaveLength(1);
        return;
      } finally {
        await cleanup();
      }
    }
    expect.fail('the one run never ended before --until, even 128 s ahead');
  });

  it('--overnight runs a recurring task once and sends one summary at the end', { timeout: 60_000 }, async () => {
    const box = await mkdtemp(join(tmpdir(), 'loopfleet-watch-'));
    const notified = join(box, 'notified.jsonl');
    const { root, cleanup } = await makeRepo({
      'BACKLOG.md': backlog(
        `check: "true"\nnotify: sh -c 'cat >> ${notified}; echo >> ${notified}'\nnotify_on: [summary]`,
        '- [ ] T-1 Sweep\n  every: 1d',
      ),
    });
    try {
      const run = await cli(root, ['--overnight']);
      expect(run.exitCode, run.stdout + run.stderr).toBe(0);
      const payloads = (await readFile(notified, 'utf8'))
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(payloads).toHaveLength(1);
      expect(payloads[0]).toMatchObject({
        event: 'summary',
        exitCode: 0,
        counts: expect.objectContaining({ queued: 1 }),
      });
      expect(String(payloads[0]!.reportPath)).toContain(join(root, '.loop-worktrees', 'reports'));
      const [row] = await status(root);
      expect(row!.runs!.map((r) => r.outcome)).toEqual(['unchanged']);
      expect(Date.parse(row!.nextRun!) - Date.parse(row!.runs![0]!.endedAt)).toBe(86_400_000);
    } finally {
      await cleanup();
      await rm(box, { recursive: true, force: true });
    }
  });
});
