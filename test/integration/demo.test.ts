import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { startModelServer } from '../../src/demo/model-server.js';
import { demoScript } from '../../src/demo/scripts.js';
import { backlog } from '../helpers/fleet-harness.js';
import { makeRepo } from '../helpers/git-repo.js';
import { pathWithout } from '../helpers/path-without.js';
import { BIN, CLI } from '../helpers/paths.js';

describe('loopfleet demo', () => {
  it('runs the bundled demo headless with the scripted model and no key: three verified, two failed as scripted', {
    timeout: 120_000,
  }, async () => {
    const env = { ...process.env };
    delete env.ANTHROPIC_API_KEY;
    delete env.ANTHROPIC_AUTH_TOKEN;
    delete env.ANTHROPIC_BASE_URL;
    const run = await execa(process.execPath, [BIN, 'demo', '--overnight'], {
      env,
      extendEnv: false,
      reject: false,
      timeout: 110_000,
    });
    expect(run.stderr).toBe('');
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toMatch(/SCRIPTED DEMO MODEL/);
    expect(run.stdout).toMatch(/done: 3 verified, 0 merged, 2 failed/);
    expect(run.stdout).toMatch(/T-3 failed — attempts gate/);
    expect(run.stdout).toMatch(/T-4 attempt 1: reviewer veto/);
    expect(run.stdout).toMatch(/T-5 attempt 1: check .* exited 1/);
    const dir = /The demo repository is at (\S+)\./.exec(run.stdout)?.[1];
    expect(dir).toBeDefined();
    const status = await execa(process.execPath, [BIN, 'status', '--json'], { cwd: dir!, reject: false });
    expect(JSON.parse(status.stdout).map((t: { status: string }) => t.status)).toEqual([
      'verified',
      'verified',
      'failed',
      'failed',
      'verified',
    ]);
    const { rm } = await import('node:fs/promises');
    await rm(dir!, { recursive: true, force: true });
  });

  it('runs to its end where bubblewrap is missing, saying first that its checks run unsandboxed and how to install it', {
    timeout: 120_000,
  }, async () => {
    const bin = pathWithout(['bwrap']);
    try {
      const env: Record<string, string> = { PATH: bin.path, HOME: process.env.HOME ?? '/root', NO_COLOR: '1' };
      const run = await execa(process.execPath, [BIN, 'demo', '--overnight'], {
        env,
        extendEnv: false,
        reject: false,
        timeout: 110_000,
      });
      expect(run.stderr).toBe('');
      expect(run.exitCode).toBe(0);
      const first = run.stdout.split('\n')[0]!;
      expect(first).toMatch(/no sandbox \(bubblewrap cannot run here: bubblewrap \(bwrap\) is not installed\)/);
      expect(first).toMatch(/checks run unsandboxed/);
      expect(first).toMatch(/(sudo )?apt-get install bubblewrap/);
      expect(first).toMatch(/a real repository is refused without it/);
      expect(run.stdout).toMatch(/done: 3 verified, 0 merged, 2 failed/);
      expect(run.stdout).toMatch(/T-4 attempt 1: reviewer veto/);
      expect(run.stdout).toMatch(/T-5 attempt 1: check .* exited 1/);
      const dir = /The demo repository is at (\S+)\./.exec(run.stdout)?.[1];
      expect(dir).toBeDefined();
      // Nothing of the demo's exception stays in the repository it leaves: its backlog still says nothing of `sandbox`.
      const { readFile, rm } = await import('node:fs/promises');
      expect(await readFile(join(dir!, 'BACKLOG.md'), 'utf8')).not.toMatch(/sandbox/);
      await rm(dir!, { recursive: true, force: true });
    } finally {
      bin.cleanup();
    }
  });

  it('never extends that to a real repository: without bubblewrap its checks are still refused', {
    timeout: 120_000,
  }, async () => {
    const bin = pathWithout(['bwrap']);
    const server = await startModelServer({
      apiKeys: ['key-for-this-test'],
      script: demoScript([{ taskId: 'T-1', kind: 'pass', edits: [{ path: 'hello.txt', content: 'hello\n' }] }]),
    });
    const repo = await makeRepo({
      'BACKLOG.md': backlog('check: test -f hello.txt\nreview: false\ngates:\n  attempts: 1', '- [ ] T-1 Say hello'),
    });
    try {
      const env = {
        PATH: bin.path,
        HOME: process.env.HOME ?? '/root',
        NO_COLOR: '1',
        ANTHROPIC_BASE_URL: server.url,
        ANTHROPIC_API_KEY: 'key-for-this-test',
      };
      const run = await execa(process.execPath, [CLI, '--overnight'], {
        cwd: repo.root,
        env,
        extendEnv: false,
        reject: false,
        timeout: 60_000,
      });
      expect(run.stdout).toMatch(
        /warning: no sandbox \(bubblewrap cannot run here: bubblewrap \(bwrap\) is not installed\) — checks of agent-written code are refused/,
      );
      expect(run.stdout).toMatch(/Fix: install it: (sudo )?apt-get install bubblewrap; or write `sandbox: off`/);
      expect(run.stdout).not.toMatch(/demo/);
      expect(run.stdout).toMatch(/done: 0 verified, 0 merged, 1 failed/);
      expect(run.exitCode).toBe(1);
    } finally {
      await repo.cleanup();
      await server.close();
      bin.cleanup();
    }
  });
});
