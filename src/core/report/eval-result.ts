/**
 * The figures of an eval run, per configuration, from what each task's run ended in: the verified share
 * with its 95 % Wilson interval, cost per verified task ({@link costFigures}), the median wall time, the
 * attempts, reviewer vetoes and guard refusals, and the agents' diff against the human change. Pure: the
 * command runs the tasks and hands the outcomes here.
 */
import { costFigures } from '../../domain/cost-per-task.js';
import { wilsonInterval } from './wilson.js';

/** How one task ended under one configuration; `skipped`: the eval's cost gate was spent before it started. */
export type EvalTaskStatus = 'verified' | 'failed' | 'skipped';

export interface EvalTaskOutcome {
  commit: string;
  status: EvalTaskStatus;
  costUsd: number;
  /** wall time of the task's run */
  seconds: number;
  attempts: number;
  vetoes: number;
  guardRefusals: number;
  /** lines added and deleted by the agents' branch; null when nothing was committed */
  diffLines: number | null;
  /** lines added and deleted by the human change (its non-test files) */
  humanLines: number;
  /** why it ended so, in loopfleet's words */
  reason: string | null;
}

export interface EvalConfigResult {
  name: string;
  tasks: number;
  verified: number;
  verifiedShare: number;
  ci95: [number, number];
  costUsd: number;
  costPerVerified: number | null;
  /** median wall seconds of the tasks that ran; null when none ran */
  medianSeconds: number | null;
  attempts: number;
  vetoes: number;
  guardRefusals: number;
  /** over the verified tasks: the agents' lines changed and the human change's */
  diffLines: number;
  humanLines: number;
  perTask: Record<string, EvalTaskStatus>;
}

export interface EvalTaskRow {
  commit: string;
  title: string;
  failToPass: string[];
  passToPass: number;
}

/** What `loopfleet eval --json` prints and `result.json` holds. */
export interface EvalResult {
  tasks: EvalTaskRow[];
  configs: EvalConfigResult[];
}

export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** One configuration's figures over the whole set: a skipped task counts as not verified. */
export function configResult(name: string, outcomes: readonly EvalTaskOutcome[]): EvalConfigResult {
  const verified = outcomes.filter((o) => o.status === 'verified');
  const costUsd = outcomes.reduce((sum, o) => sum + o.costUsd, 0);
  const ran = outcomes.filter((o) => o.status !== 'skipped');
  const sum = (f: (o: EvalTaskOutcome) => number, of: readonly EvalTaskOutcome[] = outcomes) =>
    of.reduce((total, o) => total + f(o), 0);
  return {
    name,
    tasks: outcomes.length,
    verified: verified.length,
    verifiedShare: outcomes.length === 0 ? 0 : verified.length / outcomes.length,
    ci95: wilsonInterval(verified.length, outcomes.length),
    costUsd,
    costPerVerified: costFigures(costUsd, verified.length, 0).costPerVerified,
    medianSeconds: median(ran.map((o) => o.seconds)),
    attempts: sum((o) => o.attempts),
    vetoes: sum((o) => o.vetoes),
    guardRefusals: sum((o) => o.guardRefusals),
    diffLines: sum((o) => o.diffLines ?? 0, verified),
    humanLines: sum((o) => o.humanLines, verified),
    perTask: Object.fromEntries(outcomes.map((o) => [o.commit, o.status])),
  };
}

const pct = (x: number) => `${Math.round(x * 100)} %`;
const usd = (x: number | null) => (x === null ? '—' : `$${x.toFixed(x < 1 ? 4 : 2)}`);
const cell = (s: string) => s.replace(/[\r\n]+/g, ' ').replaceAll('|', '\\|');

/** The Markdown report: the figures per configuration, then which configurations solved each task. */
export function evalMarkdown(result: EvalResult, heading: string): string {
  const lines = [
    `# ${cell(heading)}`,
    '',
    '![verified share and cost per verified task](chart.svg)',
    '',
    '| configuration | verified | share (95 % interval) | cost | per verified | median time | attempts | vetoes | guard refusals | diff vs human (lines) |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...result.configs.map(
      (c) =>
        `| ${cell(c.name)} | ${c.verified} of ${c.tasks} | ${pct(c.verifiedShare)} (${pct(c.ci95[0])}–${pct(c.ci95[1])}) | ${usd(c.costUsd)} | ${usd(c.costPerVerified)} | ${c.medianSeconds === null ? '—' : `${c.medianSeconds.toFixed(1)} s`} | ${c.attempts} | ${c.vetoes} | ${c.guardRefusals} | ${c.diffLines} vs ${c.humanLines} |`,
    ),
    '',
    '## Per task',
    '',
    `| commit | title | ${result.configs.map((c) => cell(c.name)).join(' | ')} |`,
    `| --- | --- | ${result.configs.map(() => '---').join(' | ')} |`,
    ...result.tasks.map(
      (t) =>
        `| ${t.commit.slice(0, 12)} | ${cell(t.title)} | ${result.configs.map((c) => c.perTask[t.commit] ?? '—').join(' | ')} |`,
    ),
    '',
  ];
  return lines.join('\n');
}
