import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runAttack, type AttackScript } from '../helpers/attack-harness.js';
import { backlog } from '../helpers/fleet-harness.js';
import { git, makeRepo } from '../helpers/git-repo.js';

/*
 * A check that changes what it checks, through the real pipeline and the real sandbox: an implementer that
 * adds only tests which rewrite the code under test while the check runs. The task must end failed with
 * the tracked files named, never verified, and the worktree back at the commit.
 */

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups) await c();
  cleanups = [];
});

const GOOD = 'export function add(a, b) {\n  return a + b;\n}\n';
const BAD = 'export function add() {\n  return 0;\n}\n';
const TEST = "import assert from 'node:assert/strict';\nimport { add } from '../src/lib.js';\nassert.equal(add(1, 2), 3);\n";
// Each test file runs on its own, in name order: what a first one does, the next ones see.
const CHECK = 'check: "for f in test/*.js; do node $f || exit 1; done"';

async function project() {
  const r = await makeRepo({
    'BACKLOG.md': backlog(`${CHECK}\nreview: false`, '- [ ] T-1 Fix add\n  attempts: 1'),
    'package.json': '{ "type": "module" }\n',
    'src/lib.js': BAD,
    'test/lib.test.js': TEST,
  });
  cleanups.push(r.cleanup);
  return r.root;
}

const write = (file: string, text: string) => `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(file)}, ${JSON.stringify(text)});\n`;
const implementer = (edits: Record<string, string>): AttackScript => ({ role }) => (role === 'implementer' ? { edits } : {});

async function expectCaught(root: string, edits: Record<string, string>, rule: RegExp | null): Promise<void> {
  const { fleet } = await runAttack(root, implementer(edits));
  const task = fleet.task('T-1')!;
  const attempt = task.attempts.at(-1)!;
  expect(task.status).toBe('failed');
  expect(attempt.outcome).toBe('check-failed');
  if (rule !== null) expect(attempt.reason).toMatch(rule);
  // The branch still holds the bad code, and so does the worktree: the check's rewrite is gone.
  expect(await git(root, 'show', 'loop/T-1:src/lib.js')).toBe(BAD.trimEnd());
  expect(await readFile(join(root, '.loop-worktrees', 'T-1', 'src', 'lib.js'), 'utf8')).toBe(BAD);
}

describe('a check that changes what it checks', () => {
  it('fails a test that rewrites lib.js for the check and puts it back on exit', async () => {
    const root = await project();
    const edits = { 'test/0-setup.js': write('src/lib.js', GOOD), 'test/zz-teardown.js': write('src/lib.js', BAD) };
    await expectCaught(root, edits, /^the check rewrote tracked files and put them back: src\/lib\.js$/);
  });

  it('fails a test that leaves lib.js rewritten', async () => {
    const root = await project();
    await expectCaught(root, { 'test/0-setup.js': write('src/lib.js', GOOD) }, /^the check changed tracked files: src\/lib\.js$/);
  });

  it('fails a test that deletes a tracked file', async () => {
    const root = await project();
    const edits = { 'test/0-setup.js': write('src/lib.js', GOOD), 'test/zz-teardown.js': "import { rmSync } from 'node:fs';\nrmSync('test/lib.test.js');\n" };
    await expectCaught(root, edits, /^the check changed tracked files: src\/lib\.js, test\/lib\.test\.js \(deleted\)$/);
  });

  it('cannot swap the folder of the code for another and back', async () => {
    const root = await project();
    const swap = "import { mkdirSync, renameSync, writeFileSync } from 'node:fs';\nrenameSync('src', 'src.bad');\nmkdirSync('src');\n" + `writeFileSync('src/lib.js', ${JSON.stringify(GOOD)});\n`;
    const back = "import { renameSync, rmSync } from 'node:fs';\nrmSync('src', { recursive: true });\nrenameSync('src.bad', 'src');\n";
    // The rename fails inside the sandbox (the folder is a mount point), so the check fails on the bad code.
    await expectCaught(root, { 'test/0-setup.js': swap, 'test/zz-teardown.js': back }, null);
  });
});
