import { existsSync } from 'node:fs';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { startModelServer } from '../../src/demo/model-server.js';
import { demoScript } from '../../src/demo/scripts.js';
import { backlogRepo } from '../helpers/fleet-harness.js';
import { FakeGitHub } from '../helpers/fake-github.js';
import { bareOrigin, mergeOnRemote, remoteHead } from '../helpers/pr-remote.js';
import { CLI } from '../helpers/paths.js';

const KEY = 'sk-ant-pr-watch-0123456789abcdefghijklmnopqrstuvwxyz';

let cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

describe('loopfleet --watch with land: pr', () => {
  it("opens the PR, then follows it on pr.sync's cadence until the forge merges it", { timeout: 150_000 }, async () => {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
    const github = await new FakeGitHub('acme/widgets').start();
    cleanups.push(() => github.close());
    const server = await startModelServer({
      apiKeys: [KEY],
      script: demoScript([{ taskId: 'T-1', kind: 'pass', edits: [{ path: 'one.txt', content: 'one\n' }] }]),
    });
    cleanups.push(() => server.close());
    const root = await backlogRepo(
      cleanups as Array<() => Promise<void>>,
      'land: pr\nforge: { type: github, repo: acme/widgets }\ncheck: test -f one.txt\nreview: false\npr: { sync: 1s }',
      '- [ ] T-1 Write one',
    );
    const bare = await bareOrigin(root, cleanups as Array<() => Promise<void>>);

    const watching = execa(process.execPath, [CLI, '--watch'], {
      cwd: root,
      reject: false,
      env: {
        ANTHROPIC_BASE_URL: server.url,
        ANTHROPIC_API_KEY: KEY,
        GH_TOKEN: github.token,
        GITHUB_API_URL: github.url,
        NO_COLOR: '1',
      },
      timeout: 140_000,
    });
    let stdout = '';
    let exited = false;
    watching.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    void watching.then(() => (exited = true));
    // The watch is another process: its output is the observable state, polled until it shows or the process ends.
    const seen = async (pattern: RegExp, what: string): Promise<void> => {
      while (!pattern.test(stdout)) {
        if (exited) throw new Error(`never saw ${what}; stdout:\n${stdout}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    await seen(/T-1 PR #1 opened as a draft: /, 'the PR opened');
    github.pushHead(1, (await remoteHead(bare, 'loop/T-1'))!);
    await mergeOnRemote(bare, 'loop/T-1');
    github.mergeOnForge(1);
    await seen(/sync: T-1 merged on the forge/, 'the merge followed');
    watching.kill('SIGINT');
    const done = await watching;
    expect(done.exitCode, done.stderr).toBe(130);
    expect(stdout).toMatch(/T-1 PR #1 merged: /);
    expect(stdout).not.toContain(github.token);

    const status = await execa(process.execPath, [CLI, 'status', '--json'], { cwd: root });
    const rows = JSON.parse(status.stdout) as Array<{
      id: string;
      status: string;
      pr: { number: number; state: string } | null;
    }>;
    expect(rows.map((r) => [r.id, r.status, r.pr?.number, r.pr?.state])).toEqual([['T-1', 'merged', 1, 'merged']]);
  });
});
