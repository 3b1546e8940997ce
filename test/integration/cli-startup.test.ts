import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backlog } from '../helpers/fleet-harness.js';
import { makeRepo } from '../helpers/git-repo.js';
import { BIN, ROOT } from '../helpers/paths.js';

const TRACE_HOOK = join(ROOT, 'test', 'helpers', 'module-trace.ts');
let root = '';
let scratch = '';
const cleanups: Array<() => Promise<void>> = [];
beforeAll(async () => {
  const r = await makeRepo({ 'BACKLOG.md': backlog('check: "true"', '- [ ] T-1 One') });
  cleanups.push(r.cleanup);
  root = r.root;
  scratch = await mkdtemp(join(tmpdir(), 'loopfleet-trace-'));
  cleanups.push(() => rm(scratch, { recursive: true, force: true }));
});
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** Runs the built `loopfleet` with `args` and returns its exit code and every module URL it resolved. */
async function traced(args: string[]): Promise<{ exitCode: number | undefined; modules: string[] }> {
  const out = join(scratch, `${args.join('-')}.txt`);
  const run = await execa(process.execPath, ['--import', TRACE_HOOK, BIN, ...args], {
    cwd: root,
    reject: false,
    env: { LOOPFLEET_MODULE_TRACE: out, NO_COLOR: '1', ANTHROPIC_API_KEY: '' },
  });
  return { exitCode: run.exitCode, modules: (await readFile(out, 'utf8')).split('\n') };
}

const loads = (modules: string[], pkg: string) => modules.some((url) => url.includes(`/node_modules/${pkg}/`));

// A command that never calls a model or a queue starts without reading the SDK (some three hundred modules),
// BullMQ or ioredis: each `merge`, `discard` or `status` a person or a script runs pays only for what it uses.
describe('what a command loads', () => {
  it.for([['merge', 'T-1'], ['discard', 'T-1'], ['status']])(
    '`%s` loads neither the SDK nor the queue',
    async (args) => {
      const { exitCode, modules } = await traced(args);
      expect([0, 1]).toContain(exitCode);
      // the trace saw the command's own modules: a trace that saw nothing would pass the rest vacuously
      expect(modules.some((url) => url.endsWith('/dist/commands/repo.js'))).toBe(true);
      expect(loads(modules, '@anthropic-ai/sdk')).toBe(false);
      expect(loads(modules, 'bullmq')).toBe(false);
      expect(loads(modules, 'ioredis')).toBe(false);
    },
  );

  it('the model client reads the SDK on its first call, and not before', async () => {
    const lazy = join(ROOT, 'dist', 'adapters', 'model', 'lazy-anthropic-model.js');
    const program = (call: boolean) =>
      `const { LazyAnthropicModelClient } = await import(${JSON.stringify(lazy)});
       const client = new LazyAnthropicModelClient({ apiKey: 'k', baseURL: 'http://127.0.0.1:9', maxRetries: 0,
         processRunner: {}, sandboxAvailable: false });
       ${call ? 'await client.runAgent({}, () => {}).catch(() => {});' : ''}`;
    const run = async (call: boolean) => {
      const out = join(scratch, `lazy-${call}.txt`);
      await execa(process.execPath, ['--import', TRACE_HOOK, '--input-type=module', '-e', program(call)], {
        env: { LOOPFLEET_MODULE_TRACE: out },
      });
      return (await readFile(out, 'utf8')).split('\n');
    };
    expect(loads(await run(false), '@anthropic-ai/sdk')).toBe(false);
    expect(loads(await run(true), '@anthropic-ai/sdk')).toBe(true);
  });
});
