import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startModelServer, type Script } from '../../src/demo/model-server.js';
import { demoScript } from '../../src/demo/scripts.js';
import { backlog } from '../helpers/fleet-harness.js';
import { git, makeRepo, read } from '../helpers/git-repo.js';
import { CLI, Terminal, row } from '../helpers/tmux-terminal.js';
import { readState } from '../helpers/state-file.js';

/**
 * Landing a night's work as a person does it in a real terminal (tmux): three verified branches, two of
 * which change the same line; the conflict is on screen before anything merges; one `M` and one `y` land
 * the two that fit, each checked again on the last merge; the conflicting one comes back as work, its next
 * attempt resolves the markers, and a second `M` lands it. Git is read afterwards.
 */

const KEY = 'sk-ant-tmux-conflicts-0123456789abcdefghijklmnopqrstuvwxyz';
const hasTmux = spawnSync('tmux', ['-V']).status === 0;

const SHARED = 'greeting: hello\nsecond line\n';
const T1_SHARED = 'greeting: hello from T-1\nsecond line\n';
const T2_SHARED = 'greeting: hello from T-2\nsecond line\n';
const RESOLVED = 'greeting: hello from T-1 and T-2\nsecond line\n';

// The check is what base must keep passing: no conflict marker may ever reach it.
const BACKLOG = backlog(
  `check: "! grep -q '^<<<<<<<' shared.txt"\nreview: false\nconcurrency: 3\ngates:\n  attempts: 3`,
  '- [ ] T-1 Greet from T-1\n- [ ] T-2 Greet from T-2\n- [ ] T-3 Add another file',
);

/** Every task's first attempt as the demo writes it; T-2's later attempts write both greetings in one line. */
function nightScript(): Script {
  const pacing = { chunkDelayMs: 2, delayMs: 10 };
  const first = demoScript(
    [
      { taskId: 'T-1', kind: 'pass', edits: [{ path: 'shared.txt', content: T1_SHARED }] },
      { taskId: 'T-2', kind: 'pass', edits: [{ path: 'shared.txt', content: T2_SHARED }] },
      { taskId: 'T-3', kind: 'pass', edits: [{ path: 'other.txt', content: 'other\n' }] },
    ],
    pacing,
  );
  const resolving = demoScript(
    [{ taskId: 'T-2', kind: 'pass', edits: [{ path: 'shared.txt', content: RESOLVED }] }],
    pacing,
  );
  return (req) => (req.taskId === 'T-2' && req.attempt >= 2 ? resolving(req) : first(req));
}

function textOf(blocks: unknown): string {
  return Array.isArray(blocks)
    ? blocks.map((b: { text?: unknown }) => (typeof b.text === 'string' ? b.text : '')).join('\n')
    : '';
}

/** The text of every tool result a request sends back: what the agent's tools read in its worktree. */
function toolResults(body: unknown): string[] {
  const messages = (body as { messages?: Array<{ content?: unknown }> } | null)?.messages ?? [];
  return messages.flatMap((m) =>
    Array.isArray(m.content)
      ? (m.content as Array<{ type?: string; content?: unknown }>)
          .filter((b) => b.type === 'tool_result')
          .map((b) => (typeof b.content === 'string' ? b.content : textOf(b.content)))
      : [],
  );
}

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

describe.skipIf(!hasTmux)('landing conflicting branches in a real terminal (tmux)', () => {
  it('shows the predicted conflict, lands two with M y, sends the third back as work, and lands it after its new attempt', {
    timeout: 120_000,
  }, async () => {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
    const { root, cleanup } = await makeRepo({ 'BACKLOG.md': BACKLOG, 'shared.txt': SHARED });
    cleanups.push(cleanup);
    // Outside the repository, so the checkout stays exactly as git and loopfleet left it.
    const scratch = await mkdtemp(join(tmpdir(), 'loopfleet-tmux-'));
    cleanups.push(() => rm(scratch, { recursive: true, force: true }));
    const server = await startModelServer({ apiKeys: [KEY], script: nightScript() });
    cleanups.push(() => server.close());
    const term = new Terminal();
    cleanups.push(() => term.kill());
    const exitFile = join(scratch, 'exit-code');
    await term.start(root, { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: KEY }, exitFile);

    const verified = (s: string, id: string) => /✔ verified/.test(row(s, id));
    const merged = (s: string, id: string) => /✓ merged/.test(row(s, id));

    // The night: all three verified; the two that change the same line are marked before anything merges.
    const night = await term.waitFor(
      (s) =>
        ['T-1', 'T-2', 'T-3'].every((id) => verified(s, id)) &&
        /⚠ conflicts with/.test(row(s, 'T-1')) &&
        /⚠ conflicts with/.test(row(s, 'T-2')),
      'three verified tasks, T-1 and T-2 marked as conflicting',
      60_000,
    );
    expect(row(night, 'T-1')).toMatch(/⚠ conflicts with T-2/);
    expect(row(night, 'T-2')).toMatch(/⚠ conflicts with T-1/);
    expect(row(night, 'T-3')).not.toMatch(/conflicts/);
    expect(await git(root, 'log', '-1', '--format=%s', 'main')).toBe('initial');

    // T-2's Diff tab opens with the conflict: with whom, in which file, and the marker hunk. Each key waits
    // for the screen to answer the one before: keys read together in one chunk reach the view as one paste.
    await term.keys('g');
    await term.waitFor((s) => row(s, 'T-1').startsWith('› T-1'), 'T-1 selected');
    await term.keys('j');
    await term.waitFor((s) => row(s, 'T-2').startsWith('› T-2'), 'T-2 selected');
    await term.keys('Enter');
    await term.waitFor(/── T-2 .*\n.*1 Plan.*6 History/, 'the detail of T-2 open');
    await term.keys('3');
    const diffTab = await term.waitFor(/⚠ Conflicts/, 'the Conflicts section of the Diff tab');
    expect(diffTab).toMatch(/⚠ Conflicts · predicted, nothing is merged yet/);
    expect(diffTab).toMatch(/with T-1: shared\.txt/);
    expect(diffTab).toMatch(/^<<<<<<< loop\/T-1\n.*hello from T-1\n=======\n.*hello from T-2\n>>>>>>> loop\/T-2$/m);
    await term.keys('Escape');
    // An Escape read together with the next character would be Alt+that character.
    await term.waitFor((s) => !/\[3 Diff\]/.test(s), 'the detail closed');

    // One key, one confirmation that lists the order; nothing merges before the answer.
    await term.keys('M');
    const question = await term.waitFor(/Merge queue onto main: T-1, T-2, T-3/, 'the merge queue question');
    expect(question).toMatch(/y\/n/);
    expect(await git(root, 'log', '-1', '--format=%s', 'main')).toBe('initial');
    await term.keys('y');

    // T-1 and T-3 land; T-2 no longer rebases, comes back as work, and its new attempt is verified again.
    const implementerOfT2 = (attempt: number) =>
      server.requests
        .map((r) => JSON.stringify(r.body))
        .filter(
          (b) =>
            b.includes('loopfleet-role: implementer') &&
            b.includes('loopfleet-task: T-2') &&
            b.includes(`loopfleet-attempt: ${attempt}`),
        );
    const afterFirst = await term.waitFor(
      (s) => merged(s, 'T-1') && merged(s, 'T-3') && verified(s, 'T-2') && implementerOfT2(2).length > 0,
      'T-1 and T-3 merged, T-2 verified again after a second attempt',
      60_000,
    );
    expect(afterFirst).toMatch(/Merge queue: 2 merged; T-2 sent back/);
    expect(row(afterFirst, 'T-2')).toMatch(/ 2\/3 /);
    expect(row(afterFirst, 'T-2')).not.toMatch(/conflicts with/);
    // The new attempt was told where the conflict is, and found the markers in its worktree.
    expect(implementerOfT2(2)[0]).toContain('Conflicts in: shared.txt');
    expect(implementerOfT2(2)[0]).toContain(
      '<<<<<<< main\\ngreeting: hello from T-1\\n=======\\ngreeting: hello from T-2\\n>>>>>>> loop/T-2',
    );
    const readBack = server.requests.flatMap((r) => toolResults(r.body)).filter((t) => t.includes('hello from T-2'));
    expect(readBack.some((t) => /^<<<<<<< main$/m.test(t) && /^>>>>>>> loop\/T-2$/m.test(t))).toBe(true);
    expect(await git(root, 'log', '--first-parent', '--merges', '--format=%s', 'main')).toMatch(
      /^Merge loop\/T-3[^\n]*\nMerge loop\/T-1/,
    );
    const replayed = await git(root, 'rev-parse', '--verify', 'refs/loopfleet/replayed/T-2');
    expect(await git(root, 'show', `${replayed}:shared.txt`)).toBe(T2_SHARED.trimEnd());

    await term.keys('M');
    await term.waitFor(/Merge queue onto main: T-2 /, 'the second merge queue question');
    await term.keys('y');
    await term.waitFor((s) => merged(s, 'T-2'), 'T-2 merged', 60_000);

    await term.keys('q');
    // README: 0 when every task the run touched ended verified or merged.
    expect(await term.waitForExit()).toBe(0);

    // Three merges on main's first-parent line, in the order they landed.
    expect((await git(root, 'log', '--first-parent', '--merges', '--format=%s', 'main')).split('\n')).toEqual([
      expect.stringMatching(/^Merge loop\/T-2/),
      expect.stringMatching(/^Merge loop\/T-3/),
      expect.stringMatching(/^Merge loop\/T-1/),
    ]);
    // Base green after every single merge: no commit reachable from main ever held a marker line.
    expect(await git(root, 'log', '-G^<<<<<<<', '--format=%h %s', 'main')).toBe('');
    for (const merge of (await git(root, 'log', '--first-parent', '--merges', '--format=%H', 'main')).split('\n')) {
      expect(await git(root, 'show', `${merge}:shared.txt`)).not.toMatch(/^<<<<<<<|^>>>>>>>|^=======/m);
    }
    expect(await read(root, 'shared.txt')).toBe(RESOLVED);
    expect(await read(root, 'other.txt')).toBe('other\n');
    const ticked = await read(root, 'BACKLOG.md');
    for (const id of ['T-1', 'T-2', 'T-3']) expect(ticked).toContain(`- [x] ${id} `);
    // The person's checkout is clean afterwards.
    expect(await git(root, 'status', '--porcelain')).toBe('');
    // The branch as it was before the replay is kept.
    expect(await git(root, 'show', 'refs/loopfleet/replayed/T-2:shared.txt')).toBe(T2_SHARED.trimEnd());

    const state = (await readState(root)) as {
      tasks: Record<string, { status: string; attempts: Array<{ outcome: string }> }>;
    };
    for (const id of ['T-1', 'T-2', 'T-3']) expect(state.tasks[id]?.status).toBe('merged');
    expect(state.tasks['T-2']?.attempts.length).toBe(2);
    expect(existsSync(join(root, '.loop-worktrees', 'fleet.lock'))).toBe(false);
  });
});
