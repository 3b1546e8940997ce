import { priceOf } from './pricing.js';
import type { Backlog, FleetConfig, ModelPrice, TaskSpec } from '../../domain/types.js';
import { taskGates } from './gates.js';
import { formatTokens, formatUsd } from '../text/format-units.js';

/**
 * The most a backlog can spend under its gates, before anything runs. Pure arithmetic on the front
 * matter: a task stops at its cost gate, or at its token gate priced as if every token were billed at the
 * dearest rate of the models it may use (output), whichever is lower; the fleet gates cap the sum.
 */

export interface TaskCeiling {
  id: string;
  /** null: no gate bounds it (no token and no cost gate, or an unpriced model under a token gate alone) */
  usd: number | null;
  why: string;
}

export interface Ceiling {
  tasks: TaskCeiling[];
  totalUsd: number | null;
  why: string;
}

function dearest(price: ModelPrice): number {
  return Math.max(price.input, price.output, price.cacheWrite5m, price.cacheWrite1h, price.cacheRead) / 1_000_000;
}

export function taskCeiling(spec: TaskSpec, config: FleetConfig, roleModels: string[]): TaskCeiling {
  const gates = taskGates(spec, config);
  const models = [...new Set(roleModels.length > 0 ? roleModels : [spec.model ?? config.model])];
  const prices = models.map((m) => priceOf(m, config.prices));
  const unpriced = models.filter((_, i) => prices[i] === null);
  const candidates: Array<[number, string]> = [];
  if (gates.costUsd !== null) candidates.push([gates.costUsd, `cost gate ${formatUsd(gates.costUsd)}`]);
  if (gates.tokens !== null && unpriced.length === 0) {
    const byTokens = gates.tokens * Math.max(...prices.map((p) => dearest(p!)));
    candidates.push([byTokens, `token gate ${formatTokens(gates.tokens)} at the dearest rate of ${models.join(', ')}`]);
  }
  if (candidates.length === 0) {
    const why =
      unpriced.length > 0 ? `unpriced model ${unpriced.join(', ')} and no cost gate` : 'no token or cost gate';
    return { id: spec.id, usd: null, why };
  }
  candidates.sort((a, b) => a[0] - b[0]);
  return { id: spec.id, usd: candidates[0]![0], why: candidates[0]![1] };
}

/** `roleModels(spec)` gives the models the task's roles use (agent files may set their own). */
export function backlogCeiling(backlog: Backlog, roleModels: (spec: TaskSpec) => string[]): Ceiling {
  const open = backlog.tasks.filter((t) => !t.done);
  const tasks = open.map((t) => taskCeiling(t, backlog.config, roleModels(t)));
  const unbounded = tasks.filter((t) => t.usd === null);
  const sum = unbounded.length > 0 ? null : tasks.reduce((s, t) => s + t.usd!, 0);
  const fleetCost = backlog.config.fleetGates.costUsd;
  if (fleetCost !== null && (sum === null || fleetCost < sum))
    return { tasks, totalUsd: fleetCost, why: `fleet cost gate ${formatUsd(fleetCost)}` };
  if (sum === null)
    return { tasks, totalUsd: null, why: `unbounded: ${unbounded.map((t) => `${t.id} (${t.why})`).join(', ')}` };
  return { tasks, totalUsd: sum, why: 'the sum of the task ceilings' };
}

/** What `loopfleet audit` prints of a ceiling: a heading, one line per task, and the total. */
export function ceilingLines(ceiling: Ceiling): string[] {
  const usd = (x: number | null): string => (x === null ? 'unbounded' : formatUsd(x));
  return [
    'Cost ceiling (the most the backlog can spend under its gates):',
    ...ceiling.tasks.map((t) => `  ${t.id.padEnd(8)} ${usd(t.usd)}  (${t.why})`),
    `  total    ${usd(ceiling.totalUsd)}  (${ceiling.why})`,
  ];
}
