import ignore from 'ignore';
import type { CheckResult, CheckSpec, ProofResult } from '../../domain/types.js';
import type { ScratchTrees } from '../../ports/verification.js';

/**
 * Proof that an attempt's tests see its change (`prove: true`). In a scratch checkout of the attempt's
 * commit — never the task's worktree — every non-test file of the diff is set back to base while the new
 * and changed tests stay; then the required checks run. They must fail: if they pass, the tests do not
 * exercise the change.
 */

/** Test files by convention, gitignore-style; the front matter's `tests:` globs are added to these. */
export const TEST_CONVENTIONS: readonly string[] = Object.freeze([
  'test/',
  'tests/',
  '__tests__/',
  '*.test.*',
  '*.spec.*',
  'test_*.py',
  '*_test.py',
  '*_test.go',
]);

/** A predicate for test-file paths (relative to the repository root, `/`-separated). */
export function testFileMatcher(globs: readonly string[] = []): (path: string) => boolean {
  const ig = ignore().add([...TEST_CONVENTIONS, ...globs]);
  return (path) => ig.ignores(path);
}

export interface ProveDeps {
  scratch: ScratchTrees;
  prepare: (dir: string) => Promise<void>;
  /** runs one check in `dir`; `changed` says what it did to the tracked files there, null when nothing */
  run: (dir: string, check: CheckSpec) => Promise<{ check: CheckResult; changed: string | null }>;
}

export interface ProveInput {
  /** the attempt's commit and the commit the task started from */
  commit: string;
  base: string;
  /** paths the diff changes, added or deletes */
  paths: readonly string[];
  checks: readonly CheckSpec[];
  testGlobs: readonly string[];
  scratchName: string;
}

export async function proveAttempt(input: ProveInput, deps: ProveDeps): Promise<ProofResult> {
  const isTest = testFileMatcher(input.testGlobs);
  const tests = input.paths.filter(isTest);
  const restored = input.paths.filter((p) => !isTest(p));
  const required = input.checks.filter((c) => c.required);
  const empty = { tests, restored, command: null, exitCode: null, counts: null, outputTail: '' };
  if (tests.length === 0) {
    return {
      ...empty,
      status: 'no-tests',
      message: 'not proved: the change adds or changes no test file, so no test shows it works',
    };
  }
  if (restored.length === 0) {
    return { ...empty, status: 'tests-only', message: 'nothing to prove: the diff changes only tests' };
  }
  const dir = await deps.scratch.create(input.scratchName, input.commit);
  try {
    await deps.prepare(dir);
    await deps.scratch.restore(dir, input.base, restored);
    let last: CheckResult | null = null;
    for (const check of required) {
      const { check: r, changed } = await deps.run(dir, check);
      last = r;
      // A check that fails only after changing the tree it runs on proves nothing about the change.
      if (changed !== null) {
        return {
          tests,
          restored,
          command: check.run,
          exitCode: r.exitCode,
          counts: r.counts ?? null,
          outputTail: r.outputTail,
          status: 'not-proved',
          message: changed,
        };
      }
      if (r.timedOut || r.exitCode !== 0) {
        const n = r.counts?.failed ?? null;
        const what = r.timedOut
          ? `\`${check.run}\` times out`
          : n === null || n === 0
            ? `\`${check.run}\` fails (exit ${r.exitCode ?? 'killed'})`
            : `${n} test${n === 1 ? ' fails' : 's fail'}`;
        return {
          tests,
          restored,
          command: check.run,
          exitCode: r.exitCode,
          counts: r.counts ?? null,
          outputTail: r.outputTail,
          status: 'proved',
          message: `proved: ${what} without the change`,
        };
      }
    }
    return {
      tests,
      restored,
      command: last?.command ?? null,
      exitCode: last?.exitCode ?? null,
      counts: last?.counts ?? null,
      outputTail: last?.outputTail ?? '',
      status: 'not-proved',
      message: 'the tests pass without the change: they do not exercise it',
    };
  } finally {
    await deps.scratch.remove(dir);
  }
}
