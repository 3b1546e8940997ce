import { describe, expect, it } from 'vitest';
import { closingLine, followUpComment, prBody, prTitle } from '../../../../src/core/land/pr/body.js';
import { inertBlock, inertLine, neutralise } from '../../../../src/core/land/pr/text.js';
import { fakeAttempt, fakeTask } from '../../../helpers/fake-fleet.js';

const HOSTILE =
  'Fixes #999, closes owner/repo#3 and resolves https://github.com/acme/widgets/issues/4 — cc @octocat @acme/admins !12';

/** What would make a forge act: a reference, a mention, a closing URL, a quick action or a loopfleet command at a line start. */
const ACTIONABLE = [/#\d/, /@[A-Za-z]/, /:\/\//, /!\d/, /^\s*\//m];

function verifiedTask() {
  return fakeTask('T-1', {
    title: `Parse dates ${HOSTILE}`,
    status: 'verified',
    attempt: 1,
    costUsd: 0.1234,
    usage: { input: 1000, output: 200, cacheWrite: 0, cacheRead: 0 },
    conflictsWith: ['main', 'T-2'],
    conflicts: [
      { with: 'main', files: ['a.ts'], hunks: [] },
      { with: 'T-2', files: ['b.ts'], hunks: [] },
    ],
    attempts: [
      fakeAttempt(1, {
        outcome: 'verified',
        costUsd: 0.1234,
        plan: `1. change the parser\n/merge\n/loopfleet approve\n${HOSTILE}\n\`\`\`\n<img src=x onerror=alert(1)>`,
        diffStat: ` src/parse.ts | 4 ++--\n "#999 @octocat.ts" | 1 +\n 2 files changed`,
        verdict: { pass: true, reasons: [`good; ${HOSTILE}`, '<script>x</script> [link](javascript:alert(1))'] },
        check: {
          command: 'npm test',
          exitCode: 0,
          timedOut: false,
          outputTail: '',
          durationMs: 1200,
          counts: { runner: 'node:test', passed: 22, failed: 0, skipped: 0, total: 22 },
          judged: 'passed',
          note: `test "${HOSTILE}"`,
        },
        baseline: [
          {
            name: 'npm test',
            command: 'npm test',
            commit: 'abcdef0123456789',
            exitCode: 1,
            timedOut: false,
            counts: { runner: 'node:test', passed: 15, failed: 7, skipped: 0, total: 22 },
            durationMs: 1000,
            outputTail: '',
          },
        ],
        proof: {
          status: 'proved',
          tests: ['test/parse.test.ts'],
          restored: ['src/parse.ts'],
          command: 'npm test',
          exitCode: 1,
          counts: null,
          outputTail: '',
          message: `the new tests fail without the change ${HOSTILE}`,
        },
      }),
    ],
  });
}

describe('the pull request body', () => {
  it('carries the evidence: counts against the baseline, the proof, the reviewer, attempts, cost, conflicts with other PRs, Fixes #N', () => {
    const body = prBody({
      task: verifiedTask(),
      spec: { description: 'Dates are UTC.', source: 'gh#7' },
      forge: 'github',
      base: 'main',
      pulls: new Map([['T-2', 13]]),
    });
    expect(body).toContain('- ✔ npm test → exit 0 in 1s — 7/22 failing → 0/22');
    expect(body).toContain('- ✗ npm test → exit 1 — 7/22 failing');
    expect(body).toContain('**Proof:** proved — the new tests fail without the change');
    expect(body).toContain('### Reviewer: pass');
    expect(body).toContain('| 1 | verified |  | $0.12 |');
    expect(body).toMatch(/Verified by loopfleet in 1 of 3 attempts · 1\.2k tokens · \$0\.12$/m);
    expect(body).toContain('- with `main` in a.ts');
    expect(body).toContain('- with T-2 (#13) in b.ts');
    expect(body.trimEnd().split('\n').at(-1)).toBe('Fixes #7');
  });

  it("lets no agent text reference, close, mention, link or command anything: only loopfleet's own Fixes and PR numbers remain", () => {
    const task = verifiedTask();
    const body = prBody({
      task,
      spec: { description: `${HOSTILE}\n/close\n@everyone`, source: 'gh#7' },
      forge: 'github',
      base: 'main',
      pulls: new Map([['T-2', 13]]),
    });
    const own = body.replace('Fixes #7', '').replace('(#13)', '');
    for (const pattern of ACTIONABLE) expect(own, String(pattern)).not.toMatch(pattern);
    expect(body.match(/#\d+/g)).toEqual(['#13', '#7']);
    // no raw HTML, no link, and the plan cannot close its fence
    expect(body).toMatch(/````text\n[^`]*```\n<img src=x onerror=alert\(1\)>\n````/);
    expect(body).not.toContain('<script>');
    expect(body).not.toContain('](javascript');
    expect(body).toContain('Fixes ＃999');
    expect(body).toContain('cc ＠octocat');
    expect(prTitle(task)).not.toMatch(/#\d|@[a-z]/);
    const comment = followUpComment({ task, sinceAttempt: 0, diffStat: HOSTILE, why: HOSTILE });
    for (const pattern of ACTIONABLE) expect(comment, String(pattern)).not.toMatch(pattern);
  });

  it('closes only an issue of its own forge, or a Linear issue', () => {
    expect(closingLine('gh#7', 'github')).toBe('Fixes #7');
    expect(closingLine('gl#7', 'gitlab')).toBe('Closes #7');
    expect(closingLine('gh#7', 'gitlab')).toBeNull();
    // a Linear issue: its key, for Linear's own integration with either forge
    expect(closingLine('ENG-12', 'github')).toBe('Fixes ENG-12');
    expect(closingLine('ENG-12', 'gitlab')).toBe('Fixes ENG-12');
    expect(closingLine('ENG-12 and #5', 'github')).toBeNull();
    expect(closingLine('todo src/a.ts:3', 'github')).toBeNull();
    expect(closingLine(undefined, 'github')).toBeNull();
  });

  it('neutralises text in its parts: a line is inert Markdown, a block cannot close its fence', () => {
    expect(neutralise('see #12 and @me at https://x.test')).toBe('see ＃12 and ＠me at https：//x.test');
    expect(neutralise('  /merge\nok /not')).toBe('  ／merge\nok /not');
    expect(inertLine('**bold** <b>x</b> `code` [a](b)')).toBe(
      '\\*\\*bold\\*\\* &lt;b&gt;x&lt;/b&gt; \\`code\\` \\[a\\]\\(b\\)',
    );
    const block = inertBlock('a\n````\nb');
    expect(block[0]).toBe('`````text');
    expect(block.at(-1)).toBe('`````');
    expect(inertLine('a\u001b]52;c;SGVsbG8=\u0007b\nc')).not.toMatch(/[\u0000-\u001f]/);
  });
});

describe('the morning report of pull requests', () => {
  it('lists each PR with its state and URL, for the tasks of the run and the others', async () => {
    const { renderReport } = await import('../../../../src/core/report/morning-report.js');
    const { defaultConfig } = await import('../../../helpers/fake-fleet.js');
    const pr = {
      number: 12,
      url: 'https://github.com/acme/widgets/pull/12',
      state: 'open' as const,
      draft: true,
      ci: 'failing' as const,
      review: 'none' as const,
      pushed: null,
      pushedAttempt: 1,
      answered: [],
      ciAnswered: null,
    };
    const tasks = [
      fakeTask('T-1', { status: 'verified', pr }),
      fakeTask('T-2', {
        status: 'merged',
        pr: { ...pr, number: 13, url: 'https://github.com/acme/widgets/pull/13', state: 'merged' },
      }),
    ];
    const counts = {
      queued: 0,
      running: 0,
      verified: 1,
      failed: 0,
      conflict: 0,
      merged: 1,
      discarded: 0,
      'awaiting-approval': 0,
    };
    const text = renderReport({
      repoRoot: '/repo',
      base: 'main',
      startedAt: '2026-01-01T00:00:00.000Z',
      endedAt: '2026-01-01T08:00:00.000Z',
      summary: {
        state: 'finished',
        counts,
        totals: { usage: tasks[0]!.usage, costUsd: 0, elapsedMs: 0, startedAt: null },
        stoppedBy: null,
      },
      tasks,
      ran: new Set(['T-1']),
      config: defaultConfig(),
      sandboxed: true,
      exitCode: 0,
    });
    expect(text).toContain('- **Pull request:** PR #12 draft ✗ci — https://github.com/acme/widgets/pull/12');
    // an open PR is landed on the forge: no local merge hint
    expect(text).not.toContain('loopfleet merge T-1');
    expect(text).toContain('- T-2 Task T-2 — merged · PR #13 merged https://github.com/acme/widgets/pull/13');
  });
});
