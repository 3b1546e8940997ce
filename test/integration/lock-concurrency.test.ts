import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LowdbStateStore } from '../../src/adapters/store/lowdb-state.js';
import { backlog, runFleet } from '../helpers/fleet-harness.js';
import { git, makeRepo } from '../helpers/git-repo.js';
import { type KeptFolder, keepFolder } from '../helpers/kept-folder.js';
import { CLI } from '../helpers/paths.js';

const TASKS = ['T-1', 'T-2', 'T-3'];
let cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

async function refExists(root: string, ref: string): Promise<boolean> {
  const r = await execa('git', ['rev-parse', '--verify', '--quiet', ref], { cwd: root, reject: false });
  return r.exitCode === 0;
}

/** Every task's status in state agrees with git: what its branch, its discarded ref and base say. */
async function disagreements(root: string, tips: Record<string, string>): Promise<string[]> {
  const state = await new LowdbStateStore(join(root, '.loop-worktrees', 'state.json')).load();
  const wrong: string[] = [];
  for (const id of TASKS) {
    const status = state!.tasks[id]!.status;
    const branch = await refExists(root, `refs/heads/loop/${id}`);
    const discarded = await refExists(root, `refs/loopfleet/discarded/${id}`);
    // a merge --all lands a rebased copy of the branch: base has the task's change, not necessarily its commit
    const inBase =
      (await execa('git', ['cat-file', '-e', `main:${id}.txt`], { cwd: root, reject: false })).exitCode === 0;
    const kept = discarded && (await git(root, 'rev-parse', `refs/loopfleet/discarded/${id}`)) === tips[id];
    const ok =
      (status === 'merged' && !branch && inBase && !discarded) ||
      (status === 'discarded' && !branch && kept && !inBase) ||
      (status === 'verified' && branch && !inBase && !discarded);
    if (!ok) wrong.push(`${id} ${status} (branch ${branch}, discarded ref ${discarded}, in base ${inBase})`);
  }
  return wrong;
}

// The rounds: two to four commands at once, each pair of them contending for the same state and git.
const ROUNDS: string[][][] = [
  [
    ['merge', 'T-1'],
    ['discard', 'T-2'],
  ],
  [
    ['merge', '--all'],
    ['merge', '--all'],
  ],
  [
    ['merge', 'T-1'],
    ['discard', 'T-2'],
    ['merge', '--all'],
  ],
  [
    ['discard', 'T-2'],
    ['merge', '--all'],
    ['merge', 'T-1'],
    ['merge', '--all'],
  ],
];

describe('two commands at once', () => {
  const exits = new Set<number>();
  /** The repository after one run: three verified tasks, each round's starting point. */
  let root = '';
  let kept: KeptFolder;
  let tips: Record<string, string> = {};
  beforeAll(async () => {
    const r = await makeRepo({
      'BACKLOG.md': backlog('check: "true"\nconcurrency: 3', '- [ ] T-1 One\n- [ ] T-2 Two\n- [ ] T-3 Three'),
    });
    cleanups.push(r.cleanup);
    root = r.root;
    await runFleet(root, ({ role, task }) =>
      role === 'implementer' ? { edits: { [`${task}.txt`]: `${task}\n` } } : {},
    );
    tips = Object.fromEntries(
      await Promise.all(TASKS.map(async (id) => [id, await git(root, 'rev-parse', `loop/${id}`)] as const)),
    );
    kept = await keepFolder(root);
    cleanups.push(() => kept.dispose());
  }, 120_000);

  // Eight rounds, each shape twice, each a test of its own on the same three verified tasks: a loaded machine
  // makes a round slower, and no budget covers them all.
  it.for(Array.from({ length: 2 * ROUNDS.length }, (_, round) => round))(
    'never run alongside: after round %i of concurrent merge / discard / merge --all, state and git agree',
    { timeout: 60_000 },
    async (round) => {
      await kept.restore();
      for (const id of TASKS) expect(await git(root, 'rev-parse', `loop/${id}`)).toBe(tips[id]);
      const commands = ROUNDS[round % ROUNDS.length]!;
      const results = await Promise.all(
        commands.map((args) =>
          execa(process.execPath, [CLI, ...args], { cwd: root, reject: false, env: { NO_COLOR: '1' } }),
        ),
      );
      for (const [i, result] of results.entries()) {
        exits.add(result.exitCode ?? -1);
        // a refused or failed command says why in one line, never with a stack trace
        expect(`${result.stdout}\n${result.stderr}`, `${commands[i]!.join(' ')}`).not.toMatch(/\n\s+at |ENOENT/);
        expect([0, 1, 2], `${commands[i]!.join(' ')}: ${result.stderr}`).toContain(result.exitCode);
      }
      expect(await disagreements(root, tips), commands.map((c) => c.join(' ')).join(' | ')).toEqual([]);
    },
  );

  it('some command of the rounds succeeded', () => {
    expect(exits.has(0)).toBe(true);
  });
});
