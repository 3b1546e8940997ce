import { cp, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SimpleGitAdapter } from '../adapters/git/simple-git.js';
import { DEMO_SCENARIOS } from '../demo/demo-scenarios.js';
import { startModelServer } from '../demo/model-server.js';
import { DEMO_PACING, demoScript } from '../demo/scripts.js';
import { overnight } from './overnight.js';
import { hostSandboxCause } from '../adapters/sandbox/userns-diagnosis.js';
import { unsandboxedDemoNotice } from './demo-sandbox.js';
import { findRepo } from './repo.js';
import { PACKAGE_ROOT, sandboxRunsHere } from './services.js';
import type { Overrides } from './session.js';
import { tui } from './tui.js';

const DEMO_KEY = 'demo-key-not-secret';

/** A fresh git repository with the bundled demo project and backlog; returns its path. */
export async function makeDemoRepo(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'loopfleet-demo-'));
  await cp(join(PACKAGE_ROOT, 'backlog', 'demo-repo'), dir, { recursive: true });
  await SimpleGitAdapter.createRepository(dir, 'main', 'Demo project');
  return dir;
}

export interface DemoOptions {
  headless: boolean;
  color: boolean;
  overrides: Overrides;
  out: (line: string) => void;
  /** pacing of the scripted model; the default is slow enough to watch */
  pacing?: { chunkDelayMs: number; delayMs: number };
}

/**
 * `loopfleet demo`: the real engine, real git and the real SDK, against a scripted model server on
 * loopback. Nothing leaves the machine and no key is needed. It exits 0 when the run went to its end (two
 * of its tasks fail on purpose), 130 when interrupted.
 */
export async function demo(options: DemoOptions): Promise<number> {
  const dir = await makeDemoRepo();
  const server = await startModelServer({
    script: demoScript(DEMO_SCENARIOS, options.pacing ?? DEMO_PACING),
    apiKeys: [DEMO_KEY],
  });
  const { out } = options;
  // Without bubblewrap the demo alone runs its checks unsandboxed (see `unsandboxedDemoNotice`), and says so first.
  const sandboxed = await sandboxRunsHere();
  if (!sandboxed) out(unsandboxedDemoNotice(await hostSandboxCause()));
  const overrides = sandboxed ? options.overrides : { ...options.overrides, sandbox: 'off' as const };
  out('loopfleet demo — a SCRIPTED DEMO MODEL plays every agent (no API key, nothing leaves this machine).');
  out(`Demo repository: ${dir}`);
  try {
    const env: NodeJS.ProcessEnv = { ...process.env, ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: DEMO_KEY };
    delete env.ANTHROPIC_AUTH_TOKEN;
    const repo = await findRepo(dir);
    const session = { overrides, autoMerge: false, watch: true, env };
    const code = options.headless
      ? await overnight(repo, session, out)
      : await tui(repo, { ...session, color: options.color });
    out('');
    // This very Node.js: where the global one is older, a plain `node` could not run loopfleet.
    const cli = `${process.execPath} ${join(PACKAGE_ROOT, 'dist', 'bin.js')}`;
    out(`The demo repository is at ${dir}. Look around:`);
    out(`  cd ${dir}`);
    out('  git log --all --oneline --graph');
    out(`  ${cli} status`);
    out(`  ${cli} merge T-1`);
    out(`  ${cli} discard T-4`);
    out(`  ${cli}                 # the interactive view; nothing left to run, m / d still work`);
    // The failed tasks are part of the script: a demo that ran to its end succeeded.
    return code === 1 ? 0 : code;
  } finally {
    await server.close();
  }
}
