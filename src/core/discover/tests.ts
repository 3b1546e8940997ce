/**
 * Failing tests on base: which test files a failed check names, and the command that runs one of them.
 * Test runners report failures differently; each pattern below is one runner's way. A failure no pattern
 * recognises is still reported, as one proposal for the whole check.
 */
import type { Proposal } from './proposal.js';
import { oneLine, outputTail } from './text.js';

export type TestRunner = 'node' | 'vitest' | 'jest' | 'pytest';

/** Patterns that name a failing test file (group 1), per runner's output. */
const FAILING_FILE: RegExp[] = [
  /^\s*test at (.+?):\d+:\d+\s*$/, // node --test, spec reporter's failure summary
  /^\s*(?:FAIL|×|✗|❯)\s+(\S+?\.\w+)(?:\s+(?:>|\().*)?$/, // vitest, jest
  /^FAILED\s+([^\s:]+?\.py)(?:::\S*)?/, // pytest short summary
  /^ERROR\s+([^\s:]+?\.py)(?:::\S*)?/, // pytest collection errors
];

const TAP_LOCATION = /^\s*location: '(.+?):\d+:\d+'\s*$/;

/** Which runner a command uses, looking through `npm test` / `npm run x` / `yarn x` / `pnpm x` into package.json. */
export function testRunnerOf(
  command: string,
  scripts: Record<string, string> = {},
): { runner: TestRunner; python: boolean } | null {
  let text = command;
  const script = /^\s*(?:npm|pnpm|yarn)(?:\s+run)?\s+([\w:.-]+)\s*$/.exec(command);
  if (script) {
    const name = script[1] === 't' ? 'test' : script[1]!;
    text = scripts[name] ?? text;
  }
  if (/\bnode\b[^|&;]*\s--test\b/.test(text)) return { runner: 'node', python: false };
  if (/\bvitest\b/.test(text)) return { runner: 'vitest', python: false };
  if (/\bjest\b/.test(text)) return { runner: 'jest', python: false };
  if (/\bpytest\b/.test(text)) return { runner: 'pytest', python: /\bpython3?\s+-m\s+pytest\b/.test(text) };
  return null;
}

/** Quotes a path for /bin/sh when it needs it. */
export function shellQuote(path: string): string {
  return /^[\w@%+=:,./-]+$/.test(path) ? path : `'${path.replace(/'/g, `'\\''`)}'`;
}

/** The command that runs only `file`, or null when the runner is not known. */
export function narrowedCheck(runner: { runner: TestRunner; python: boolean } | null, file: string): string | null {
  const f = shellQuote(file);
  switch (runner?.runner) {
    case 'node':
      return `node --test ${f}`;
    case 'vitest':
      return `npx vitest run ${f}`;
    case 'jest':
      return `npx jest ${f}`;
    case 'pytest':
      return runner.python ? `python -m pytest ${f}` : `pytest ${f}`;
    default:
      return null;
  }
}

/**
 * The tracked files a check's output names as failing, in order of first mention. `root` is the folder the
 * check ran in: absolute paths under it are made relative.
 */
export function failingTestFiles(output: string, tracked: ReadonlySet<string>, root: string): string[] {
  const found: string[] = [];
  const prefix = root.endsWith('/') ? root : `${root}/`;
  // node --test's TAP reporter: the `location:` of a `not ok` block (passing blocks may have one too).
  let inFailure = false;
  for (const line of output.split(/\r?\n/)) {
    if (/^\s*not ok\b/.test(line)) inFailure = true;
    else if (/^\s*ok\b/.test(line)) inFailure = false;
    const patterns = inFailure ? [TAP_LOCATION, ...FAILING_FILE] : FAILING_FILE;
    for (const re of patterns) {
      const m = re.exec(line);
      if (!m) continue;
      let file = m[1]!.replace(/^file:\/\//, '');
      if (file.startsWith(prefix)) file = file.slice(prefix.length);
      file = file.replace(/^\.\//, '');
      if (tracked.has(file) && !found.includes(file)) found.push(file);
    }
  }
  return found;
}

export function failingFileProposal(
  file: string,
  baseCheck: string,
  base: string,
  check: string | null,
  output: string,
): Proposal {
  return {
    from: 'tests',
    title: `Make the failing tests in ${oneLine(file)} pass`,
    source: `test ${file}`,
    priority: 'high',
    ...(check === null ? {} : { check }),
    summary: [
      `The check \`${baseCheck}\` fails on ${base} in ${file}. Fix the code (or the test, if the test is wrong) so that it passes. The end of the failing output:`,
    ],
    quoted: outputTail(output),
    rank: 1,
  };
}

export function failingCheckProposal(baseCheck: string, base: string, output: string): Proposal {
  return {
    from: 'tests',
    title: `Make the check \`${oneLine(baseCheck.replace(/`/g, "'"), 60)}\` pass on ${base}`,
    source: `test ${oneLine(baseCheck, 200)}`,
    priority: 'high',
    summary: [
      `The check \`${baseCheck}\` fails on ${base}, and its output names no test file loopfleet recognises. The end of the failing output:`,
    ],
    quoted: outputTail(output),
    rank: 1,
  };
}
