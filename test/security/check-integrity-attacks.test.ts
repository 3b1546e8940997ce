import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runAttack, type AttackScript } from '../helpers/attack-harness.js';
import { backlog, reopen, runFleet } from '../helpers/fleet-harness.js';
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
const TEST =
  "import assert from 'node:assert/strict';\nimport { add } from '../src/lib.js';\nassert.equal(add(1, 2), 3);\n";
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

const write = (file: string, text: string) =>
  `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(file)}, ${JSON.stringify(text)});\n`;
const implementer =
  (edits: Record<string, string>): AttackScript =>
  ({ role }) =>
    role === 'implementer' ? { edits } : {};

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
    await expectCaught(
      root,
      { 'test/0-setup.js': write('src/lib.js', GOOD) },
      /^the check changed tracked files: src\/lib\.js$/,
    );
  });

  it('fails a test that deletes a tracked file', async () => {
    const root = await project();
    const edits = {
      'test/0-setup.js': write('src/lib.js', GOOD),
      'test/zz-teardown.js': "import { rmSync } from 'node:fs';\nrmSync('test/lib.test.js');\n",
    };
    await expectCaught(root, edits, /^the check changed tracked files: src\/lib\.js, test\/lib\.test\.js \(deleted\)$/);
  });

  it('cannot swap the folder of the code for another and back', async () => {
    const root = await project();
    const swap =
      "import { mkdirSync, renameSync, writeFileSync } from 'node:fs';\nrenameSync('src', 'src.bad');\nmkdirSync('src');\n" +
      `writeFileSync('src/lib.js', ${JSON.stringify(GOOD)});\n`;
    const back =
      "import { renameSync, rmSync } from 'node:fs';\nrmSync('src', { recursive: true });\nrenameSync('src.bad', 'src');\n";
    // The rename fails inside the sandbox (the folder is a mount point), so the check fails on the bad code.
    await expectCaught(root, { 'test/0-setup.js': swap, 'test/zz-teardown.js': back }, null);
  });
});

describe("the merge queue's re-check", () => {
  it('sends back a branch whose test hides, on the new base, the file it clashes with', {
    timeout: 60_000,
  }, async () => {
    const clash =
      "import { existsSync } from 'node:fs';\nif (existsSync('one.txt') && existsSync('four.txt')) { console.log('one.txt and four.txt clash'); process.exit(1); }\n";
    const r = await makeRepo({
      'BACKLOG.md': backlog(`${CHECK}\nreview: false`, '- [ ] T-1 One\n- [ ] T-2 Four'),
      'package.json': '{ "type": "module" }\n',
      'test/clash.js': clash,
    });
    cleanups.push(r.cleanup);
    // T-2's tests move one.txt aside while the check runs, when there is one: only on the new base.
    const hide =
      "import { existsSync, renameSync } from 'node:fs';\nif (existsSync('one.txt')) renameSync('one.txt', 'one.aside');\n";
    const back =
      "import { existsSync, renameSync } from 'node:fs';\nif (existsSync('one.aside')) renameSync('one.aside', 'one.txt');\n";
    const edits: Record<string, Record<string, string>> = {
      'T-1': { 'one.txt': 'one\n' },
      'T-2': { 'four.txt': 'four\n', 'test/0-hide.js': hide, 'test/zz-back.js': back },
    };
    const { fleet } = await runFleet(r.root, ({ role, task }) =>
      role === 'implementer' ? { edits: edits[task]! } : {},
    );
    expect(fleet.tasks().map((t) => t.status)).toEqual(['verified', 'verified']);

    const h = await reopen(r.root);
    const result = await h.fleet.mergeAll();
    await h.session.close();
    expect(result.merged).toEqual(['T-1']);
    expect(result.sentBack).toEqual([
      { id: 'T-2', reason: 'the check rewrote tracked files and put them back: one.txt' },
    ]);
    expect(await git(r.root, 'ls-tree', '--name-only', 'main')).not.toContain('four.txt');
  });
});

describe('the proof', () => {
  it('is not fooled by a test that breaks the code set back to base', { timeout: 60_000 }, async () => {
    const r = await makeRepo({
      'BACKLOG.md': backlog(`${CHECK}\nreview: false\nprove: true`, '- [ ] T-1 Document add\n  attempts: 1'),
      'package.json': '{ "type": "module" }\n',
      'src/lib.js': GOOD,
      'test/lib.test.js': TEST,
    });
    cleanups.push(r.cleanup);
    // Without the change (the proof's scratch copy), the test breaks lib.js, so that the check fails there.
    const trap =
      "import { readFileSync, writeFileSync } from 'node:fs';\nif (!readFileSync('src/lib.js', 'utf8').includes('// adds')) writeFileSync('src/lib.js', 'export function add() { return 0; }\\n');\n";
    const { fleet } = await runAttack(
      r.root,
      implementer({ 'src/lib.js': `// adds\n${GOOD}`, 'test/0-trap.js': trap }),
    );
    const task = fleet.task('T-1')!;
    expect(task.status).toBe('failed');
    expect(task.attempts.at(-1)!).toMatchObject({
      outcome: 'check-failed',
      reason: 'the check changed tracked files: src/lib.js',
    });
  });
});
