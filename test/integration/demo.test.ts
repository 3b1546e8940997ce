import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';

const BIN = join(import.meta.dirname, '..', '..', 'dist', 'bin.js');

describe('loopfleet demo', () => {
  it('runs the bundled demo headless with the scripted model and no key: three verified, two failed as scripted', { timeout: 120_000 }, async () => {
    const env = { ...process.env };
    delete env.ANTHROPIC_API_KEY;
    delete env.ANTHROPIC_AUTH_TOKEN;
    delete env.ANTHROPIC_BASE_URL;
    const run = await execa(process.execPath, [BIN, 'demo', '--overnight'], { env, extendEnv: false, reject: false, timeout: 110_000 });
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
    expect(JSON.parse(status.stdout).map((t: { status: string }) => t.status)).toEqual(['verified', 'verified', 'failed', 'failed', 'verified']);
    const { rm } = await import('node:fs/promises');
    await rm(dir!, { recursive: true, force: true });
  });
});
