import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startModelServer } from '../../src/demo/model-server.js';
import { demoScript } from '../../src/demo/scripts.js';
import { backlog } from '../helpers/fleet-harness.js';
import { makeRepo } from '../helpers/git-repo.js';
import { CLI, Terminal, row } from '../helpers/tmux-terminal.js';
import { readState } from '../helpers/state-file.js';

/** `autonomy: plan` as a person uses it: the built CLI in tmux, `a` approves one plan, `e` edits another. */

const KEY = 'sk-ant-tmux-approve-0123456789abcdefghijklmnopqrstuvwxyz';
const hasTmux = spawnSync('tmux', ['-V']).status === 0;

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

describe.skipIf(!hasTmux)('approving plans in a real terminal (tmux)', () => {
  it('waits with both plans; a approves T-1 as it is, e approves T-2 as edited; each implementer gets its plan', {
    timeout: 120_000,
  }, async () => {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
    const { root, cleanup } = await makeRepo({
      'BACKLOG.md': backlog(
        'check: test -f hello.txt || test -f other.txt\nreview: true\nconcurrency: 1\nautonomy: plan',
        '- [ ] T-1 Say hello\n- [ ] T-2 Say something else',
      ),
    });
    cleanups.push(cleanup);
    const scratch = await mkdtemp(join(tmpdir(), 'loopfleet-tmux-'));
    cleanups.push(() => rm(scratch, { recursive: true, force: true }));
    // The "editor": appends a step to the plan file it is given, as a person would, and saves.
    const editor = join(scratch, 'editor.sh');
    await writeFile(editor, '#!/bin/sh\necho "4. EDITED BY A PERSON: keep other.txt to one line." >> "$1"\n');
    await chmod(editor, 0o755);
    const server = await startModelServer({
      apiKeys: [KEY],
      script: demoScript(
        [
          { taskId: 'T-1', kind: 'pass', edits: [{ path: 'hello.txt', content: 'hello\n' }] },
          { taskId: 'T-2', kind: 'pass', edits: [{ path: 'other.txt', content: 'other\n' }] },
        ],
        { chunkDelayMs: 5, delayMs: 20 },
      ),
    });
    cleanups.push(() => server.close());
    const term = new Terminal();
    cleanups.push(() => term.kill());
    const exitFile = join(scratch, 'exit-code');
    await term.start(root, { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: KEY, VISUAL: editor }, exitFile);

    await term.waitFor(
      (s) => /awaiting/.test(row(s, 'T-1')) && /awaiting/.test(row(s, 'T-2')),
      'both plans awaiting approval',
      60_000,
    );
    const implementerCalls = () =>
      server.requests.filter((r) => JSON.stringify(r.body).includes('loopfleet-role: implementer'));
    expect(implementerCalls()).toEqual([]);

    await term.keys('g');
    await term.waitFor((s) => row(s, 'T-1').startsWith('› T-1'), 'T-1 selected');
    await term.keys('a');
    await term.waitFor((s) => /verified/.test(row(s, 'T-1')), 'T-1 verified after a', 60_000);

    await term.keys('j');
    await term.waitFor((s) => row(s, 'T-2').startsWith('› T-2'), 'T-2 selected');
    await term.keys('e');
    await term.waitFor(/T-2's edited plan is approved/, 'the edited plan approved');
    await term.waitFor((s) => /verified/.test(row(s, 'T-2')), 'T-2 verified after e', 60_000);

    const bodies = implementerCalls().map((r) => JSON.stringify(r.body));
    const t1 = bodies.filter((b) => b.includes('loopfleet-task: T-1'));
    const t2 = bodies.filter((b) => b.includes('loopfleet-task: T-2'));
    expect(t1.length).toBeGreaterThan(0);
    expect(t1[0]).toContain('## Plan for T-1');
    expect(t2.length).toBeGreaterThan(0);
    expect(t2[0]).toContain('## Plan for T-2');
    expect(t2[0]).toContain('EDITED BY A PERSON');
    expect(bodies.filter((b) => b.includes('EDITED BY A PERSON')).every((b) => b.includes('loopfleet-task: T-2'))).toBe(
      true,
    );

    await term.keys('q');
    expect(await term.waitForExit()).toBe(0);
    const state = (await readState(root)) as { tasks: Record<string, { status: string; approvedPlan?: string }> };
    expect(state.tasks['T-1']?.status).toBe('verified');
    expect(state.tasks['T-2']?.approvedPlan).toContain('EDITED BY A PERSON');
  });
});
