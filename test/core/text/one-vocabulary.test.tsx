import { stripVTControlCharacters } from 'node:util';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cleanup, render } from 'ink-testing-library';
import { FleetEmitter } from '../../../src/core/task/events.js';
import { renderReport } from '../../../src/core/report/morning-report.js';
import { checkFleetGates, checkTaskGates } from '../../../src/core/budget/gates.js';
import { backlogCeiling, ceilingLines } from '../../../src/core/budget/ceiling.js';
import { prBody } from '../../../src/core/land/pr/body.js';
import { summaryPayload } from '../../../src/core/fleet/notify-digest.js';
import { statusTable } from '../../../src/commands/status.js';
import { printEvents } from '../../../src/commands/headless-printer.js';
import { FleetBar } from '../../../src/ui/fleet-bar.js';
import { TaskRow } from '../../../src/ui/task-row.js';
import { rowColumns } from '../../../src/ui/row-columns.js';
import * as units from '../../../src/core/text/format-units.js';
import { totalTokens, type CheckResult, type TaskSpec, type TaskStatus } from '../../../src/domain/types.js';
import { defaultConfig, fakeAttempt, fakeTask } from '../../helpers/fake-fleet.js';

/**
 * One usage — 1,234,567 tokens, $0.4213, 3 h 5 min — rendered through every surface a person reads: the TUI's
 * fleet bar and task row, the morning report, a task's and the fleet's gate messages, the audit's cost
 * ceiling, `status`, the headless printer, a pull request body and the notify summary. Each shows the same
 * strings. A second pass marks what the formatters of `format-units` return: every figure each surface
 * prints must carry the mark, so a surface that formats a figure on its own fails even where it happens to
 * print the same text.
 */

/**
 * `on`: whether the formatters mark their text; `sign`: the mark of each, one narrow character so the TUI's
 * columns still fit. Hoisted: the module mock below is set up before this file's imports.
 */
const MARK = vi.hoisted(() => ({
  on: false,
  sign: {
    formatTokens: '†',
    formatUsd: '‡',
    formatDuration: '§',
    formatLimitDuration: '§',
    shortDuration: '§',
    clockTime: '§',
    formatBytes: '¶',
  } as Record<string, string>,
}));

vi.mock('../../../src/core/text/format-units.js', async (importOriginal) => {
  const real = await importOriginal<Record<string, unknown>>();
  return Object.fromEntries(
    Object.entries(real).map(([name, value]) => {
      if (typeof value !== 'function') return [name, value];
      const sign = MARK.sign[name];
      if (sign === undefined) throw new Error(`format-units exports ${name}: give it a mark in this test`);
      const f = value as (n: number) => string;
      return [name, (n: number) => (MARK.on ? sign : '') + f(n)];
    }),
  );
});

const TOKENS = 1_234_567;
const USD = 0.4213;
const ELAPSED_MS = (3 * 60 + 5) * 60_000;

/** How the vocabulary writes the usage: one string per quantity, wherever it is shown. */
const SAID = { tokens: '1.2M', usd: '$0.42', duration: '3h 05m' } as const;
type Quantity = keyof typeof SAID;

const USAGE = { input: 1_000_000, output: 200_000, cacheWrite: 30_000, cacheRead: 4_567 };
const STARTED = '2026-03-02T22:00:00.000Z';
const ENDED = new Date(Date.parse(STARTED) + ELAPSED_MS).toISOString();

function counts(): Record<TaskStatus, number> {
  return {
    queued: 0,
    running: 0,
    'awaiting-approval': 0,
    verified: 1,
    failed: 0,
    conflict: 0,
    merged: 0,
    discarded: 0,
  };
}

function check(): CheckResult {
  return {
    command: 'npm test',
    exitCode: 0,
    timedOut: false,
    outputTail: '',
    durationMs: ELAPSED_MS,
    counts: { runner: 'node:test', passed: 22, failed: 0, skipped: 0, total: 22 },
    judged: 'passed',
  };
}

function task() {
  return fakeTask('T-1', {
    title: 'Parse dates as UTC',
    status: 'verified',
    attempt: 1,
    usage: { ...USAGE },
    costUsd: USD,
    elapsedMs: ELAPSED_MS,
    attempts: [fakeAttempt(1, { outcome: 'verified', costUsd: USD, check: check() })],
  });
}

function spec(id: string, overrides: Partial<TaskSpec>): TaskSpec {
  return { id, title: `Task ${id}`, line: 1, done: false, description: '', after: [], files: [], ...overrides };
}

const plain = (text: string | undefined): string => stripVTControlCharacters(text ?? '');

/** Each surface's text for the one usage (Ink renders into 100 columns). */
function surfaces(): Record<string, { text: string; shows: Quantity[] }> {
  const config = defaultConfig();
  const t = task();
  const fleetBar = plain(
    render(
      <FleetBar
        repo="/repo"
        base="main"
        state="finished"
        stoppedBy={null}
        counts={counts()}
        tokens={totalTokens(t.usage)}
        costUsd={USD}
        elapsedMs={ELAPSED_MS}
        gates={config.fleetGates}
        sandboxed
        columns={100}
        rows={3}
      />,
    ).lastFrame(),
  );
  const taskRow = plain(
    render(
      <TaskRow
        task={t}
        selected={false}
        elapsedMs={ELAPSED_MS}
        cols={rowColumns(100, 3)}
        gates={config.gates}
        now={0}
      />,
    ).lastFrame(),
  );
  const report = renderReport({
    repoRoot: '/repo',
    base: 'main',
    startedAt: STARTED,
    endedAt: ENDED,
    summary: {
      state: 'finished',
      counts: counts(),
      totals: { usage: t.usage, costUsd: USD, elapsedMs: ELAPSED_MS, startedAt: STARTED },
      stoppedBy: null,
    },
    tasks: [t],
    ran: new Set(['T-1']),
    config,
    sandboxed: true,
    exitCode: 0,
  });
  // Each gate trips alone: tokens, then cost, then time.
  const taskGate = [
    checkTaskGates(t, { attempts: 3, tokens: 1_000_000, costUsd: null, timeMs: null }, 0),
    checkTaskGates(t, { attempts: 3, tokens: null, costUsd: 0.4, timeMs: null }, 0),
    checkTaskGates(t, { attempts: 3, tokens: null, costUsd: null, timeMs: 3 * 3_600_000 }, ELAPSED_MS),
  ].map((g) => g?.message ?? 'no gate tripped');
  const fleetTotals = { usage: t.usage, costUsd: USD };
  const fleetGate = [
    checkFleetGates(fleetTotals, { tokens: 1_000_000, costUsd: null, timeMs: null }, 0),
    checkFleetGates(fleetTotals, { tokens: null, costUsd: 0.4, timeMs: null }, 0),
    checkFleetGates(fleetTotals, { tokens: null, costUsd: null, timeMs: 3 * 3_600_000 }, ELAPSED_MS),
  ].map((g) => g?.message ?? 'no gate tripped');
  // T-1 is bounded by its cost gate, T-2 by its token gate (no cost gate of its own or the front matter's).
  const ceiling = ceilingLines(
    backlogCeiling(
      {
        path: '/repo/BACKLOG.md',
        config: {
          ...config,
          gates: { ...config.gates, tokens: null, costUsd: null },
          fleetGates: { ...config.fleetGates, costUsd: null },
        },
        tasks: [spec('T-1', { costUsd: USD }), spec('T-2', { tokens: TOKENS })],
      },
      () => [config.model],
    ),
  );
  const status = statusTable([
    {
      id: 'T-1',
      title: t.title,
      status: 'verified',
      phase: null,
      attempt: 1,
      maxAttempts: 3,
      tokens: totalTokens(t.usage),
      costUsd: USD,
      branch: t.branch,
      reason: null,
    },
  ]);
  const printed: string[] = [];
  const events = new FleetEmitter();
  const stop = printEvents(events, (line) => printed.push(line));
  events.emit('task', { task: t, previousStatus: 'running' });
  stop();
  const pr = prBody({
    task: t,
    spec: { description: 'Dates are UTC.' },
    forge: 'github',
    base: 'main',
    pulls: new Map(),
  });
  const payload = summaryPayload({
    counts: counts(),
    tokens: totalTokens(t.usage),
    costUsd: USD,
    elapsedMs: ELAPSED_MS,
    reportPath: '/repo/.loop/report.md',
    exitCode: 0,
  });
  const all: Quantity[] = ['tokens', 'usd', 'duration'];
  return {
    'the TUI fleet bar': { text: fleetBar, shows: all },
    'the TUI task row': { text: taskRow, shows: all },
    'the morning report': { text: report, shows: all },
    'a task gate message': { text: taskGate.join('\n'), shows: all },
    'a fleet gate message': { text: fleetGate.join('\n'), shows: all },
    'the audit cost ceiling': { text: ceiling.join('\n'), shows: ['tokens', 'usd'] },
    'the status table': { text: status, shows: ['tokens', 'usd'] },
    'the headless printer': { text: printed.join('\n'), shows: ['tokens', 'usd'] },
    'a pull request body': { text: pr, shows: all },
    'the notify summary': { text: String(payload.text), shows: all },
  };
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** `said` standing alone: no digit, point or mark glued before it, no digit after it. */
const alone = (said: string, mark = ''): RegExp => new RegExp(`(?<![\\d.]|[†‡§¶])${escape(mark + said)}(?!\\d)`);

/** Money, a token count or a duration, as any surface might write one. */
const FIGURE_TEXT = String.raw`(?:<?\$\d[\d.]*|\d+h \d{2}m|\d+m \d{2}s|<1s|\d+(?:\.\d+)?(?:[kM]|ms|s|m|h)\b)`;
const FIGURE = new RegExp(String.raw`(?<![\w.])${FIGURE_TEXT}`, 'g');
/** A figure with a formatter's mark before it. */
const MARKED_FIGURE = new RegExp(`[†‡§¶]${FIGURE_TEXT}`, 'g');

/** Figures written the way a surface of its own might: a third decimal, a fourth cent digit, raw counts, seconds. */
const OWN_FORMS = [/1\.23M/, /1234567/, /1,234,567/, /1234\.6k/, /\$0\.421/, /\$0\.4213/, /11100s/, /185m\b/, /3\.08h/];

afterEach(() => {
  MARK.on = false;
  cleanup();
});

describe('one vocabulary', () => {
  it('is what the formatters say of the usage', () => {
    expect(units.formatTokens(TOKENS)).toBe(SAID.tokens);
    expect(units.formatUsd(USD)).toBe(SAID.usd);
    expect(units.formatDuration(ELAPSED_MS)).toBe(SAID.duration);
  });

  it('reads the same on every surface', () => {
    for (const [surface, { text, shows }] of Object.entries(surfaces())) {
      for (const q of shows) expect(text, `${surface} shows ${q} as ${SAID[q]}:\n${text}`).toMatch(alone(SAID[q]));
      for (const form of OWN_FORMS) expect(text, `${surface} writes a figure its own way:\n${text}`).not.toMatch(form);
    }
  });

  describe('with each formatter marking its text', () => {
    beforeEach(() => {
      MARK.on = true;
    });

    it('the scan for unmarked figures finds a figure a surface wrote beside the formatters', () => {
      const planted =
        'cost ‡$0.42 and $0.4213, †1.2M and 1.23M tokens, ran §3h 05m and 11100s, waited 2m 05s, T-12 v1.2';
      expect([...planted.replace(MARKED_FIGURE, '').matchAll(FIGURE)].map((m) => m[0])).toEqual([
        '$0.4213',
        '1.23M',
        '11100s',
        '2m 05s',
      ]);
    });

    it('every figure on every surface comes from the formatters', () => {
      for (const [surface, { text, shows }] of Object.entries(surfaces())) {
        const mark = {
          tokens: MARK.sign.formatTokens!,
          usd: MARK.sign.formatUsd!,
          duration: MARK.sign.formatDuration!,
        };
        for (const q of shows)
          expect(text, `${surface} shows ${q} through its formatter:\n${text}`).toMatch(alone(SAID[q], mark[q]));
        // Any figure that looks like money, tokens or a duration and carries no mark was written by the surface.
        const unmarked = [...text.replace(MARKED_FIGURE, '').matchAll(FIGURE)].map((m) => m[0]);
        expect(unmarked, `${surface} writes these figures on its own:\n${text}`).toEqual([]);
      }
    });
  });

  it('the notify summary keeps its figures as numbers beside the line for a person', () => {
    const p = summaryPayload({
      counts: counts(),
      tokens: TOKENS,
      costUsd: USD,
      elapsedMs: ELAPSED_MS,
      reportPath: null,
      exitCode: 0,
    });
    expect(p).toMatchObject({ tokens: TOKENS, costUsd: USD, elapsedMs: ELAPSED_MS });
    expect(p.text).toBe(`loopfleet: 1 verified, 0 merged, 0 failed, 0 conflict; 1.2M tokens, $0.42, 3h 05m`);
  });
});
