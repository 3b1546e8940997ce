/**
 * A small JavaScript project whose history the eval tests build commit by commit: `src/math.js` exports
 * functions, `test/*.test.js` test them with node:test. The check is `node --test test/*.test.js`.
 */
import { git, writeFiles } from './git-repo.js';

/** `src/math.js` exporting each function: `{ add: '(a, b) => a + b' }`. */
export const LIB = (fns: Record<string, string>) =>
  `${Object.entries(fns)
    .map(([name, body]) => `exports.${name} = ${body};`)
    .join('\n')}\n`;

/** A node:test file asserting each case: `{ 'add works': 'm.add(2, 3), 5' }`. */
export const TESTS = (cases: Record<string, string>) =>
  `const test = require('node:test');\nconst assert = require('node:assert');\nconst m = require('../src/math.js');\n${Object.entries(
    cases,
  )
    .map(([name, expr]) => `test('${name}', () => { assert.strictEqual(${expr}); });`)
    .join('\n')}\n`;

/** Commits `files` in `root` with `message`; returns the commit. */
export async function commitFiles(root: string, files: Record<string, string>, message: string): Promise<string> {
  await writeFiles(root, files);
  await git(root, 'add', '-A');
  await git(root, 'commit', '--quiet', '-m', message);
  return git(root, 'rev-parse', 'HEAD');
}
