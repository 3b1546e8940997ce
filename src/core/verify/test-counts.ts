import type { TestCounts } from '../../domain/types.js';

/**
 * Test counts from a check's output, read from the summary lines of known test runners: node:test (spec
 * and TAP reporters), vitest, jest, mocha, ava, pytest, go test (`-v` or `-json`) and cargo test.
 *
 * Invariants: a count is only reported when a runner's own summary (or per-test lines, for go) was found;
 * when several runners' summaries are in one output (`npm test` running two), their counts are summed;
 * `failing` is set only when the output names every failing test it counts.
 *
 * A test can print a line that looks like a summary. Runners that print one summary per run (vitest, jest,
 * mocha, ava, pytest) are read from their LAST summary, which the runner prints after every test has run;
 * when that runner's summaries in one output do not all say the same, the counts are `disagreeing` and the
 * check fails ({@link judgeCheck}) rather than pass on either. Runners summed per run or binary (node:test, go,
 * cargo) are summed: a printed summary only adds to them, it cannot hide a failure.
 *
 * The runners' structured reports (jest/vitest `--json`, junit files) are not read: the check is the
 * person's own command, which loopfleet does not change, and a file in the worktree is written by the same
 * code under test that could print a fake summary.
 */

const ANSI = /\x1b\[[0-9;?]*[ -/]*[@-~]/g;

interface RunnerCounts {
  passed: number;
  failed: number;
  skipped: number;
  total: number;
  failing: string[] | null;
  /** the runner's summaries, in its own words, when they do not all say the same */
  disagree?: string[];
}

type Parser = (text: string, lines: string[]) => RunnerCounts | null;

const num = (s: string | undefined): number => (s === undefined ? 0 : Number(s));

function all(re: RegExp, text: string): RegExpExecArray[] {
  return [...text.matchAll(new RegExp(re.source, re.flags.includes('g') ? re.flags : `${re.flags}g`))];
}

/** node:test: `ℹ tests 7` … (spec) or `# tests 7` … (TAP); one block per `node --test` run. */
const nodeTest: Parser = (text, lines) => {
  const blocks = all(/^[ℹ#] tests (\d+)\n(?:[ℹ#] [a-z_]+ [\d.]+\n?)+/m, text);
  if (blocks.length === 0) return null;
  let passed = 0,
    failed = 0,
    skipped = 0,
    total = 0;
  for (const b of blocks) {
    const field = (name: string) => num(new RegExp(`^[ℹ#] ${name} (\\d+)`, 'm').exec(b[0])?.[1]);
    total += field('tests');
    passed += field('pass');
    failed += field('fail') + field('cancelled');
    skipped += field('skipped') + field('todo');
  }
  // Spec: the "failing tests:" section lists each failing test; TAP: `not ok` lines with no subtests.
  const failing: string[] = [];
  const section = lines.findIndex((l) => /^✖ failing tests:/.test(l));
  if (section !== -1) {
    for (const l of lines.slice(section + 1)) {
      const m = /^\s*✖ (.+?)(?: \([\d.]+m?s\))?$/.exec(l);
      if (m) failing.push(m[1]!);
    }
  } else {
    lines.forEach((l, i) => {
      const m = /^(\s*)not ok \d+ - (.+?)(?: # .*)?$/.exec(l);
      if (!m) return;
      const parent =
        i > 0 && /^\s*1\.\.\d+$/.test(lines[i - 1]!) && /^(\s*)/.exec(lines[i - 1]!)![1]!.length > m[1]!.length;
      if (!parent) failing.push(m[2]!);
    });
  }
  return { passed, failed, skipped, total, failing: failing.length === failed ? failing : null };
};

/** One summary of a runner that prints one per run. */
type Summary = Omit<RunnerCounts, 'failing' | 'disagree'>;

/** The last of `summaries`, with `disagree` set when they do not all say the same. */
function lastSummary(summaries: readonly Summary[], failing: string[] | null): RunnerCounts | null {
  const last = summaries.at(-1);
  if (last === undefined) return null;
  const said = (c: Summary) => `${c.failed} failed, ${c.passed} passed, ${c.skipped} skipped, ${c.total} total`;
  const distinct = [...new Set(summaries.map(said))];
  const named = failing !== null && failing.length === last.failed ? failing : null;
  return { ...last, failing: named, ...(distinct.length > 1 ? { disagree: summaries.map(said) } : {}) };
}

/** vitest: `Tests  1 failed | 2 passed | 1 skipped (4)`; failures as `FAIL  file > suite > name`. */
const vitest: Parser = (text, lines) => {
  const summaries = all(/^\s*Tests\s+((?:\d+ [a-z]+(?: \| )?)+)\s*\((\d+)\)\s*$/m, text).map((m) => {
    const part = (word: string) => num(new RegExp(`(\\d+) ${word}`).exec(m[1]!)?.[1]);
    return {
      passed: part('passed'),
      failed: part('failed'),
      skipped: part('skipped') + part('todo'),
      total: num(m[2]),
    };
  });
  const failing = [
    ...new Set(
      lines.map((l) => /^\s*FAIL\s+(\S.*? > .+?)\s*$/.exec(l)?.[1]).filter((x): x is string => x !== undefined),
    ),
  ];
  return lastSummary(summaries, failing);
};

/** jest: `Tests:       1 failed, 1 skipped, 2 passed, 4 total`; failures as `● suite › name`. */
const jest: Parser = (text, lines) => {
  const summaries = all(/^Tests:\s+(.*?(\d+) total)\s*$/m, text).map((m) => {
    const part = (word: string) => num(new RegExp(`(\\d+) ${word}`).exec(m[1]!)?.[1]);
    return {
      passed: part('passed'),
      failed: part('failed'),
      skipped: part('skipped') + part('todo'),
      total: num(m[2]),
    };
  });
  const failing = [
    ...new Set(
      lines
        .map((l) => /^\s+● (.+)$/.exec(l)?.[1])
        .filter((x): x is string => x !== undefined && !x.startsWith('Test suite failed')),
    ),
  ];
  return lastSummary(summaries, failing);
};

/** mocha (spec reporter): `2 passing (8ms)`, then `1 pending` and `1 failing` when there are any. */
const mocha: Parser = (text) => {
  const summaries = all(
    /^\s+(\d+) passing \([\d.]+m?s\)[ \t]*\n(?:\s+(\d+) pending[ \t]*(?:\n|$))?(?:\s+(\d+) failing[ \t]*$)?/m,
    text,
  ).map((m) => {
    const passed = num(m[1]);
    const skipped = num(m[2]);
    const failed = num(m[3]);
    return { passed, failed, skipped, total: passed + failed + skipped };
  });
  return lastSummary(summaries, null);
};

/** ava: `2 tests passed`, `1 test failed`, `1 test skipped`, `1 test todo`, `1 known failure`; `✔`/`✘` lines. */
const ava: Parser = (text, lines) => {
  const values = (re: RegExp) => all(re, text).map((m) => num(m[1]));
  const failedLines = values(/^\s+(\d+) tests? failed\s*$/m);
  const passedLines = values(/^\s+(\d+) tests? passed\s*$/m);
  if (failedLines.length === 0 && passedLines.length === 0) return null;
  const skipped =
    (values(/^\s+(\d+) tests? skipped\s*$/m).at(-1) ?? 0) + (values(/^\s+(\d+) tests? todo\s*$/m).at(-1) ?? 0);
  const passed = passedLines.at(-1) ?? lines.filter((l) => /^\s+✔ /.test(l)).length;
  const failed = failedLines.at(-1) ?? 0;
  const failing = lines
    .map(
      (l) =>
        /^\s+✘ (?:\[fail\]: )?(.+?)(?: Assertion failed| Error thrown in test| Test finished without running any assertions)?\s*$/.exec(
          l,
        )?.[1],
    )
    .filter((x): x is string => x !== undefined);
  // ava prints each count once: a second, different count of the same kind is a summary a test printed.
  const disagree =
    new Set(failedLines).size > 1 || new Set(passedLines).size > 1
      ? [`failed: ${failedLines.join(', ')}; passed: ${passedLines.join(', ')}`]
      : undefined;
  return {
    passed,
    failed,
    skipped,
    total: passed + failed + skipped,
    failing: failing.length === failed ? failing : null,
    ...(disagree ? { disagree } : {}),
  };
};

/** pytest: `=== 1 failed, 21 passed, 1 skipped in 0.12s ===` or the same line bare (`-q`). */
const pytest: Parser = (text, lines) => {
  const summaries = all(
    /^=*\s*((?:\d+ (?:failed|passed|skipped|xfailed|xpassed|errors?|deselected|warnings?)(?:, )?)+) in [\d.]+s(?: \([^)]*\))?\s*=*\s*$/m,
    text,
  ).map((m) => {
    const part = (word: string) => num(new RegExp(`(\\d+) ${word}`).exec(m[1]!)?.[1]);
    const failed = part('failed') + part('errors?');
    const passed = part('passed') + part('xpassed');
    const skipped = part('skipped') + part('xfailed');
    return { passed, failed, skipped, total: passed + failed + skipped };
  });
  const failing = lines.map((l) => /^(?:FAILED|ERROR) (\S+)/.exec(l)?.[1]).filter((x): x is string => x !== undefined);
  return lastSummary(summaries, failing);
};

/** go test: `-json` events, or `--- PASS/FAIL/SKIP: Name` lines of top-level tests (`-v`). */
const goTest: Parser = (text, lines) => {
  const events = lines.filter((l) => l.startsWith('{"') && l.includes('"Action"'));
  const verdicts: Array<{ action: string; name: string }> = [];
  for (const e of events) {
    try {
      const v = JSON.parse(e) as { Action?: string; Test?: string };
      if (
        v.Test !== undefined &&
        !v.Test.includes('/') &&
        (v.Action === 'pass' || v.Action === 'fail' || v.Action === 'skip')
      ) {
        verdicts.push({ action: v.Action, name: v.Test });
      }
    } catch {
      // a line that only looks like an event is output of a test, not a verdict
    }
  }
  for (const l of lines) {
    const m = /^--- (PASS|FAIL|SKIP): (\S+) \(/.exec(l);
    if (m) verdicts.push({ action: m[1]!.toLowerCase(), name: m[2]! });
  }
  if (verdicts.length === 0) return null;
  // Without -v only failures are printed: the passing tests are unknown, so nothing is counted.
  if (!verdicts.some((v) => v.action === 'pass') && !/^=== RUN/m.test(text) && events.length === 0) return null;
  const failing = verdicts.filter((v) => v.action === 'fail').map((v) => v.name);
  const passed = verdicts.filter((v) => v.action === 'pass').length;
  const skipped = verdicts.filter((v) => v.action === 'skip').length;
  return { passed, failed: failing.length, skipped, total: verdicts.length, failing };
};

/** cargo test: one `test result: ok. 21 passed; 1 failed; 2 ignored; …` per test binary. */
const cargo: Parser = (text, lines) => {
  const ms = all(/^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored/m, text);
  if (ms.length === 0) return null;
  let passed = 0,
    failed = 0,
    skipped = 0;
  for (const m of ms) {
    passed += num(m[1]);
    failed += num(m[2]);
    skipped += num(m[3]);
  }
  const failing = lines
    .map((l) => /^test (\S+) \.\.\. FAILED$/.exec(l)?.[1])
    .filter((x): x is string => x !== undefined);
  return {
    passed,
    failed,
    skipped,
    total: passed + failed + skipped,
    failing: failing.length === failed ? failing : null,
  };
};

const PARSERS: Array<[string, Parser]> = [
  ['node:test', nodeTest],
  ['vitest', vitest],
  ['jest', jest],
  ['mocha', mocha],
  ['ava', ava],
  ['pytest', pytest],
  ['go', goTest],
  ['cargo', cargo],
];

/** Counts of every runner whose summary is in `output`, summed; null when none is. */
export function parseTestCounts(output: string): TestCounts | null {
  const text = output.replace(ANSI, '').replace(/\r\n?/g, '\n');
  const lines = text.split('\n');
  const found: Array<[string, RunnerCounts]> = [];
  for (const [runner, parse] of PARSERS) {
    const p = parse(text, lines);
    if (p !== null) found.push([runner, p]);
  }
  if (found.length === 0) return null;
  const counts: TestCounts = { runner: found.map(([r]) => r).join('+'), passed: 0, failed: 0, skipped: 0, total: 0 };
  const failing: string[] = [];
  let named = true;
  for (const [, p] of found) {
    counts.passed += p.passed;
    counts.failed += p.failed;
    counts.skipped += p.skipped;
    counts.total += p.total;
    if (p.failing === null) named = false;
    else failing.push(...p.failing);
  }
  if (named) counts.failing = failing;
  const disagreeing = found
    .filter(([, p]) => p.disagree !== undefined)
    .map(
      ([runner, p]) =>
        `${runner} printed ${p.disagree!.length > 1 ? `${p.disagree!.length} summaries: ` : ''}${p.disagree!.join(' / ')}`,
    );
  if (disagreeing.length > 0) counts.disagreeing = disagreeing.join('; ');
  return counts;
}

/** The sum of several checks' counts; null when none has counts. */
export function sumCounts(list: ReadonlyArray<TestCounts | null | undefined>): TestCounts | null {
  const known = list.filter((c): c is TestCounts => c != null);
  if (known.length === 0) return null;
  const sum: TestCounts = {
    runner: [...new Set(known.map((c) => c.runner))].join('+'),
    passed: 0,
    failed: 0,
    skipped: 0,
    total: 0,
  };
  for (const c of known) {
    sum.passed += c.passed;
    sum.failed += c.failed;
    sum.skipped += c.skipped;
    sum.total += c.total;
  }
  if (known.every((c) => c.failing !== undefined)) sum.failing = known.flatMap((c) => c.failing!);
  const disagreeing = known.filter((c) => c.disagreeing !== undefined).map((c) => c.disagreeing!);
  if (disagreeing.length > 0) sum.disagreeing = disagreeing.join('; ');
  return sum;
}

export type Progress = 'improved' | 'same' | 'worse' | 'fewer-tests';

/**
 * Did an attempt get closer? fewer-tests: it ran fewer tests than base (a failure whatever its exit code);
 * otherwise its failing count against the previous attempt's, or against base's when there is no previous.
 * Unknown counts compare as `same`.
 */
export function compareProgress(
  previous: TestCounts | null,
  current: TestCounts | null,
  baseline: TestCounts | null,
): Progress {
  if (current === null) return 'same';
  if (baseline !== null && current.total < baseline.total) return 'fewer-tests';
  const before = previous ?? baseline;
  if (before === null) return 'same';
  if (current.failed < before.failed) return 'improved';
  if (current.failed > before.failed) return 'worse';
  return 'same';
}

/** `1/22 failing`. */
export function formatCounts(c: TestCounts): string {
  return `${c.failed}/${c.total} failing`;
}

/** `7/22 failing → 1/22`, or `1/22 failing` without a before. */
export function formatChange(before: TestCounts | null, after: TestCounts): string {
  return before === null
    ? formatCounts(after)
    : `${before.failed}/${before.total} failing → ${after.failed}/${after.total}`;
}
