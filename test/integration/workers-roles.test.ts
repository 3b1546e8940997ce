import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Script, ScriptRequest } from '../../src/demo/script-types.js';
import { pass, startFleet, type Fleet } from '../helpers/workers-fleet.js';
import { PACKAGED_AGENTS } from '../helpers/paths.js';

let fleet: Fleet | null = null;
afterEach(async () => {
  await fleet?.close();
  fleet = null;
});

const PACKAGED = join(PACKAGED_AGENTS, 'implementer.md');
const MARK = 'OVERRIDE-PROMPT-4e1b: write exactly the file the task names.';

describe("the repository's roles on workers", () => {
  it("an agents/implementer.md override on the coordinator is the system prompt and model the worker's model server receives", {
    timeout: 120_000,
  }, async () => {
    const packaged = await readFile(PACKAGED, 'utf8');
    // The packaged file with another model and one more line in its prompt.
    const override = packaged
      .replace(/^# model: .*$/m, 'model: claude-haiku-4-5')
      .replace(/\n---\n/, `\n---\n${MARK}\n`);
    expect(override).toContain('model: claude-haiku-4-5');
    const ids = ['T-1'];
    const seen: ScriptRequest[] = [];
    const base = pass(ids);
    const script: Script = (req) => {
      seen.push(req);
      return base(req);
    };
    fleet = await startFleet({
      ids,
      script,
      front: 'check: test -n "$(ls T-*.txt)"',
      files: { 'agents/implementer.md': override },
    });
    const worker = await fleet.worker('w1');
    const done = await fleet.coordinator().child;
    expect(done.exitCode).toBe(0);
    expect(worker.output()).toMatch(/job T-1:1: started/);
    const implementer = seen.filter((r) => r.role === 'implementer');
    const explorer = seen.filter((r) => r.role === 'explorer');
    expect(implementer.length).toBeGreaterThan(0);
    for (const r of implementer) {
      expect(r.system).toContain(MARK);
      expect(r.model).toBe('claude-haiku-4-5');
    }
    // The roles the repository does not override are the packaged ones, on the backlog's model.
    expect(explorer.length).toBeGreaterThan(0);
    for (const r of explorer) {
      expect(r.system).not.toContain(MARK);
      expect(r.model).not.toBe('claude-haiku-4-5');
    }
    expect((await fleet.state())!.tasks['T-1']!.status).toBe('verified');
  });
});
