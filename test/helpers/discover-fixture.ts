import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RemoteSources } from '../../src/commands/discover-run.js';
import { makeRepo } from './git-repo.js';
import { FIXTURES as TEST_FIXTURES } from './paths.js';

export const FIXTURES = join(TEST_FIXTURES, 'discover');
export const fixture = (name: string) => readFileSync(join(FIXTURES, name), 'utf8');

export const FIXTURE_BACKLOG = `---
check: node --test
---

# Backlog

- [ ] T-1 A person's own task
  Keep this exactly as it is.
`;

/**
 * A repository with TODOs in three languages, a failing node:test file next to a passing one, a lint
 * script that fails on one file, and a lockfile (the npm output itself is recorded: no registry here).
 */
export function fixtureRepo(backlog = FIXTURE_BACKLOG) {
  return makeRepo({
    'BACKLOG.md': backlog,
    'package.json': JSON.stringify(
      {
        name: 'fixture',
        version: '1.0.0',
        scripts: { test: 'node --test', lint: 'node lint.js' },
        dependencies: { lodash: '^4.17.15', 'left-pad': '^1.1.0' },
      },
      null,
      2,
    ),
    'package-lock.json': JSON.stringify({ name: 'fixture', lockfileVersion: 3, requires: true, packages: {} }, null, 2),
    'lint.js':
      "console.log('src/calc.js:3:10: error no-plus: write it as a sum() call');\nconsole.log('1 problem');\nprocess.exit(1);\n",
    'src/calc.js':
      'function add(a, b) {\n  // TODO: handle negative numbers\n  return a + b;\n}\n\nmodule.exports = { add };\n',
    'src/util.ts':
      'export class Cache {\n  get(key: string): string | undefined {\n    /* FIXME(ana): evict old entries */\n    return undefined;\n  }\n}\n',
    'tools/report.py':
      'import sys\n\n\ndef main(argv):\n    if argv:\n        # HACK: the first argument is ignored\n        return 0\n    return 1\n',
    'test/calc.test.js':
      "const test = require('node:test');\nconst assert = require('node:assert');\nconst { add } = require('../src/calc.js');\ntest('adds', () => { assert.strictEqual(add(2, 2), 5); });\n",
    'test/ok.test.js': "const test = require('node:test');\ntest('fine', () => {});\n",
    'vendor/lib.js': '// TODO: not ours, never proposed\n',
    'notes.txt': 'a todo list in prose: TODO is not a comment here\n',
  });
}

/** Replays recorded npm and gh output; `onCall` runs before each answer (a person editing meanwhile). */
export function replay(
  answers: { outdated?: string; audit?: string; gh?: Record<string, { exitCode: number; output: string }> | null },
  onCall: () => Promise<void> = async () => undefined,
): RemoteSources & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    npmOutdated: async () => {
      calls.push('npm outdated');
      await onCall();
      return { exitCode: 1, output: answers.outdated ?? '{}' };
    },
    npmAudit: async () => {
      calls.push('npm audit');
      await onCall();
      return { exitCode: 1, output: answers.audit ?? '{"vulnerabilities":{}}' };
    },
    gh: async (args) => {
      calls.push(`gh ${args}`);
      if (answers.gh === null || answers.gh === undefined) return null;
      const key = Object.keys(answers.gh).find((k) => args.startsWith(k));
      return key === undefined ? { exitCode: 1, output: `unexpected gh ${args}` } : answers.gh[key]!;
    },
  };
}
