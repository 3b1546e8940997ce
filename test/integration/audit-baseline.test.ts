import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { audit } from '../../src/commands/audit.js';
import { findRepo } from '../../src/commands/repo.js';
import { backlog } from '../helpers/fleet-harness.js';
import { git, makeRepo } from '../helpers/git-repo.js';

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups) await c();
  cleanups = [];
});

const TESTS =
  "import test from 'node:test';\nimport assert from 'node:assert';\ntest('one', () => {});\ntest('two', () => assert.equal(1, 2));\n";

describe('loopfleet audit shows the baseline', () => {
  it('runs each check of every list on base with its test counts, caches it, and says who is judged by not making it worse', async () => {
    const r = await makeRepo({
      'BACKLOG.md': backlog(
        `check: [node --test, {name: lint, run: "true", required: false}]`,
        '- [ ] T-1 Shared\n- [ ] T-2 Own\n  check: node --test',
      ),
      'test/a.test.mjs': TESTS,
    });
    cleanups.push(r.cleanup);
    const run = async () => {
      const lines: string[] = [];
      await audit(await findRepo(r.root), { ...process.env, ANTHROPIC_API_KEY: 'k' }, (l) => lines.push(l));
      return lines.join('\n');
    };
    const text = await run();
    expect(text).toContain(
      '· `node --test` fails on main already (T-1, T-2): 1 failing test of 2; T-1 (the shared check) judged by not making it worse',
    );
    expect(text).toContain('· `true` passes on main (T-1)');
    const path = join(r.root, '.loop-worktrees', 'baselines.json');
    const cache = JSON.parse(await readFile(path, 'utf8'));
    const commit = await git(r.root, 'rev-parse', 'main');
    expect(cache.results).toMatchObject([
      {
        command: 'node --test',
        commit,
        exitCode: 1,
        counts: { runner: 'node:test', passed: 1, failed: 1, total: 2, failing: ['two'] },
      },
      { command: 'true', commit, exitCode: 0 },
    ]);
    // The next audit reads the cache instead of running the check again.
    cache.results[0].counts.failed = 5;
    await writeFile(path, JSON.stringify(cache));
    expect(await run()).toContain('5 failing tests of 2');
  }, 60_000);
});
