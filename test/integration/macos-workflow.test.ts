/**
 * The GitHub Actions job that runs the sandbox attack tests on macOS (.github/workflows/macos-sandbox.yml),
 * read as YAML: its triggers, runner, Node, steps in order, and the test files it names — which must exist
 * and must be every sandbox attack test there is. Its guard step is run here for real against the built CLI.
 */
import { existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ExecaRunner } from '../../src/adapters/sandbox/execa-runner.js';
import { pathWithout } from '../helpers/path-without.js';
import { ROOT } from '../helpers/paths.js';

const WORKFLOW = path.join(ROOT, '.github', 'workflows', 'macos-sandbox.yml');

interface Step {
  name?: string;
  uses?: string;
  run?: string;
  with?: Record<string, unknown>;
}
interface Workflow {
  on: Record<string, unknown>;
  jobs: Record<string, { 'runs-on': string; steps: Step[]; 'timeout-minutes'?: number }>;
}

const sandboxHere = await new ExecaRunner().sandboxAvailable();
const workflow = parse(await readFile(WORKFLOW, 'utf8')) as Workflow;
const job = Object.values(workflow.jobs)[0]!;
const runs = job.steps.map((s) => s.run ?? '');
const at = (pattern: RegExp) => runs.findIndex((r) => pattern.test(r));

/** Sandbox attack tests: the attack files of test/security that need the sandbox, and the self-test's. */
async function sandboxAttackTests(): Promise<string[]> {
  const dir = path.join(ROOT, 'test', 'security');
  const found: string[] = [];
  for (const name of (await readdir(dir)).sort()) {
    if (!/-attacks\.test\.ts$/.test(name)) continue;
    const text = await readFile(path.join(dir, name), 'utf8');
    // a file that runs only on Linux says so with `process.platform === 'linux'` beside its sandbox probe
    if (text.includes('sandboxAvailable()') && !text.includes("process.platform === 'linux'"))
      found.push(`test/security/${name}`);
  }
  // Then the self-test and the macOS path's own tests, which switch to the real Seatbelt on a Mac.
  return [
    ...found,
    'test/adapters/sandbox/selftest.test.ts',
    'test/adapters/sandbox/platform.test.ts',
    'test/adapters/model/cli-agent-darwin.test.ts',
    'test/adapters/model/agent-presets-darwin.test.ts',
  ];
}

describe('the macOS sandbox job', () => {
  it('runs on push and by hand, one job on macos-latest with a time limit', () => {
    expect(Object.keys(workflow.on).sort()).toEqual(['push', 'workflow_dispatch']);
    expect(Object.keys(workflow.jobs)).toEqual(['sandbox-attacks']);
    expect(job['runs-on']).toBe('macos-latest');
    expect(job['timeout-minutes']).toBeGreaterThan(0);
  });

  it('checks out, sets up Node 24, npm ci, builds, checks the sandbox runs, then runs the tests, in that order', () => {
    expect(job.steps[0]?.uses).toMatch(/^actions\/checkout@v\d+$/);
    const node = job.steps.find((s) => s.uses?.startsWith('actions/setup-node@'));
    expect(String(node?.with?.['node-version'])).toBe('24');
    const order = [at(/^npm ci\b/), at(/^npm run build$/), at(/sandboxAvailable\(\)/), at(/^npx vitest run /)];
    expect(order.every((i) => i > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
  });

  it('names every sandbox attack test, and each file it names exists', async () => {
    const words = runs[at(/^npx vitest run /)]!.trim().split(/\s+/).slice(3);
    for (const file of words) expect(existsSync(path.join(ROOT, file)), file).toBe(true);
    expect(words).toEqual(await sandboxAttackTests());
  });

  // The guard step's script, against the built runner (`npm run build` first, as the job does).
  const guard = runs[at(/sandboxAvailable\(\)/)]!.replace(/^node --input-type=module -e /, '');
  const script = guard.slice(1, -1);
  const dist = existsSync(path.join(ROOT, 'dist', 'adapters', 'sandbox', 'execa-runner.js'));

  it('names the built runner that `npm run build` makes', () => {
    expect(dist).toBe(true);
  });

  it('its guard fails where there is no sandbox, saying so', async () => {
    expect(guard.startsWith('"') && guard.endsWith('"')).toBe(true);
    const bin = pathWithout(['bwrap']);
    try {
      const r = await execa(process.execPath, ['--input-type=module', '-e', script], {
        cwd: ROOT,
        env: { PATH: bin.path },
        extendEnv: false,
        reject: false,
      });
      expect(r.stderr).toBe('no sandbox on this runner: the attack tests would only skip');
      expect(r.exitCode).toBe(1);
    } finally {
      bin.cleanup();
    }
  });

  it.runIf(sandboxHere)('its guard passes where the sandbox runs', async () => {
    const r = await execa(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, reject: false });
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
  });
});
