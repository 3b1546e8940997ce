import { existsSync } from 'node:fs';
import { appendFile, mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { backlog, openFleet, reopen, runFleet } from '../../helpers/fleet-harness.js';
import { git, makeRepo, read } from '../../helpers/git-repo.js';
import { readState } from '../../helpers/state-file.js';
import { eventually } from '../../helpers/wait.js';

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups) await c();
  cleanups = [];
});

async function repo(front: string, items: string, files: Record<string, string> = {}) {
  const r = await makeRepo({ 'BACKLOG.md': backlog(front, items), ...files });
  cleanups.push(r.cleanup);
  return r.root;
}

const writesDone = ({ role }: { role: string }) => (role === 'implementer' ? { edits: { 'done.txt': 'done\n' } } : {});

describe('worktrees ready to work in', () => {
  it('runs setup once per new worktree with the task environment, unique ports and copied .env that is never committed', async () => {
    const root = await repo(
      [
        'concurrency: 2',
        'setup: sh -c \'echo "$LOOPFLEET_TASK_ID $PORT $LOOPFLEET_BRANCH $LOOPFLEET_BASE_BRANCH $LOOPFLEET_GIT_ROOT ${ANTHROPIC_API_KEY:-nokey}" > .setup-env; sleep 0.5\'',
        'check: grep -q SECRET=1 .env && test -f done.txt',
        'ports: 4300-4301',
      ].join('\n'),
      '- [ ] T-1 One\n- [ ] T-2 Two',
      { '.gitignore': '.env\n.setup-env\n', '.worktreeinclude': '.env\n' },
    );
    await writeFile(join(root, '.env'), 'SECRET=1\n');
    const { fleet } = await runFleet(root, writesDone);
    expect(fleet.task('T-1')!.status).toBe('verified');
    expect(fleet.task('T-2')!.status).toBe('verified');
    const envs = await Promise.all(['T-1', 'T-2'].map((id) => read(root, `.loop-worktrees/${id}/.setup-env`)));
    const fields = envs.map((e) => e.trim().split(' '));
    expect(fields[0]!.slice(0, 1).concat(fields[0]!.slice(2))).toEqual(['T-1', 'loop/T-1', 'main', root, 'nokey']);
    expect(new Set(fields.map((f) => f[1])).size).toBe(2);
    for (const f of fields) expect(['4300', '4301']).toContain(f[1]);
    await expect(git(root, 'show', 'loop/T-1:.env')).rejects.toThrow();
    expect(await read(root, '.loop-worktrees/T-1/.env')).toBe('SECRET=1\n');
  });

  it('refuses a change that adds a secret and keeps it out of the branch history', async () => {
    const key = `sk-ant-api03-${'x'.repeat(48)}`;
    const root = await repo('check: "true"', '- [ ] T-1 One\n  attempts: 1');
    const { fleet } = await runFleet(root, ({ role }) =>
      role === 'implementer' ? { edits: { 'config.js': `export const key = "${key}";\n` } } : {},
    );
    const t = fleet.task('T-1')!;
    expect(t.attempts[0]!.outcome).toBe('guard-failed');
    expect(t.attempts[0]!.reason).toMatch(/Anthropic API key/);
    expect(await git(root, 'log', '-p', 'loop/T-1')).not.toContain(key);
  });

  it('runs the check in the sandbox: it cannot write outside its worktree', async () => {
    const root = await repo(
      'check: sh -c \'touch "$LOOPFLEET_GIT_ROOT/escaped" 2>/dev/null; touch /tmp/loopfleet-escaped-$LOOPFLEET_TASK_ID 2>/dev/null; test -f done.txt\'',
      '- [ ] T-1 One',
    );
    const { fleet } = await runFleet(root, writesDone);
    expect(fleet.sandboxed).toBe(true);
    expect(fleet.task('T-1')!.status).toBe('verified');
    expect(existsSync(join(root, 'escaped'))).toBe(false);
    expect(existsSync('/tmp/loopfleet-escaped-T-1')).toBe(false);
  });
});

describe('a backlog edited while the fleet runs', () => {
  it('queues a task added to BACKLOG.md, writing its id back, and drops a removed queued one', async () => {
    const root = await repo('check: test -f done.txt\nconcurrency: 1', '- [ ] T-1 One\n- [ ] T-2 Two');
    const h = await openFleet(
      root,
      ({ role }) => (role === 'implementer' ? { edits: { 'done.txt': 'x' }, delayMs: 300, chunks: 2 } : {}),
      { watch: true },
    );
    h.fleet.start();
    // While T-1 runs: a person removes T-2 and adds an item without an id.
    await new Promise((r) => setTimeout(r, 200));
    const text = await read(root, 'BACKLOG.md');
    await writeFile(join(root, 'BACKLOG.md'), text.replace('- [ ] T-2 Two\n', '') + '- [ ] Added while running\n');
    await eventually(() => h.fleet.task('T-3'));
    await h.fleet.whenIdle();
    await h.session.close();
    expect(await read(root, 'BACKLOG.md')).toContain('- [ ] T-3 Added while running');
    expect(h.fleet.task('T-3')!.status).toBe('verified');
    expect(h.fleet.task('T-1')!.status).toBe('verified');
    expect(h.fleet.task('T-2')?.status ?? 'queued').toBe('queued');
    expect(h.model.calls.some((c) => c.task === 'T-2')).toBe(false);
  });
});

describe('prune', () => {
  it('removes what a crash or a manual deletion left behind and never a branch', async () => {
    const root = await repo('check: test -f done.txt', '- [ ] T-1 One\n- [ ] T-2 Two');
    await runFleet(root, writesDone);
    await rm(join(root, '.loop-worktrees', 'T-1'), { recursive: true, force: true }); // deleted by hand
    await mkdir(join(root, '.loop-worktrees', 'T-9'), { recursive: true }); // a half-made worktree
    await appendFile(join(root, '.loop-worktrees', 'T-9', 'junk'), 'x');
    // Every start prunes; `loopfleet prune` does the same on demand.
    const h = await reopen(root);
    const again = await h.fleet.prune();
    await h.session.close();
    expect(again.removed).toEqual([]);
    expect(again.kept.sort()).toEqual(['T-2']);
    expect(existsSync(join(root, '.loop-worktrees', 'T-9'))).toBe(false);
    expect(existsSync(join(root, '.loop-worktrees', 'T-2', 'done.txt'))).toBe(true);
    expect(await git(root, 'worktree', 'list', '--porcelain')).not.toContain('prunable');
    expect(await git(root, 'branch', '--list', 'loop/*')).toMatch(/loop\/T-1[\s\S]*loop\/T-2/);
    expect((await readState(root)).tasks['T-1'].status).toBe('verified');
  });
});

describe('notify and the shell without a sandbox', () => {
  it('runs the notify command with each status change and the fleet going idle as JSON on stdin', async () => {
    const root = await repo(
      'check: test -f done.txt\nnotify: sh -c "cat >> \\"$LOOPFLEET_GIT_ROOT_FOR_TEST/notified.jsonl\\""',
      '- [ ] T-1 One',
    );
    process.env.LOOPFLEET_GIT_ROOT_FOR_TEST = root;
    try {
      await runFleet(root, writesDone); // closing the session waits for the notify commands
      const events = (await read(root, 'notified.jsonl'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(events.map((e) => e.status ?? e.event)).toEqual(['running', 'verified', 'idle']);
      expect(events).toContainEqual(
        expect.objectContaining({
          event: 'status',
          id: 'T-1',
          status: 'verified',
          previousStatus: 'running',
          branch: 'loop/T-1',
        }),
      );
      expect(events.at(-1)).toMatchObject({ event: 'idle', counts: { verified: 1 } });
    } finally {
      delete process.env.LOOPFLEET_GIT_ROOT_FOR_TEST;
    }
  });

  it('offers the implementer no shell where there is no sandbox, unless sandbox: off says so', async () => {
    // No check: without a sandbox a check of agent-written code would be refused before any agent runs.
    const root = await repo('review: true', '- [ ] T-1 One');
    const h = await openFleet(root, writesDone, { services: (s) => ({ ...s, sandboxed: false, shellAllowed: false }) });
    h.fleet.start();
    await h.fleet.whenIdle();
    await h.session.close();
    const implementer = h.model.calls.find((c) => c.role === 'implementer')!;
    expect(implementer.shell).toBe(false);

    const off = await repo('check: test -f done.txt\nsandbox: off', '- [ ] T-1 One');
    const h2 = await runFleet(off, writesDone);
    expect(h2.fleet.sandboxed).toBe(false);
    expect(h2.model.calls.find((c) => c.role === 'implementer')!.shell).toBe(true);
  });
});
