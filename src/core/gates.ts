import { GateError } from '../domain/errors.js';
import { totalTokens, type FleetGates, type FleetTotals, type TaskGates, type TaskState } from '../domain/types.js';

/**
 * Gate checks. Pure: given the numbers, say whether to stop. The fleet calls them before every model call
 * and on every usage report during one (aborting the call when one trips).
 */

function fmt(n: number): string {
  return n >= 1_000_000 ? `${(n / 1_000_000).toFixed(2)}M` : n >= 1000 ? `${Math.round(n / 1000)}k` : String(n);
}

/**
 * Tokens, cost and wall clock of one task since its budget started (its first run or its last retry).
 * `elapsedMs` is the task's whole running time; the budget's share is subtracted here.
 */
export function checkTaskGates(task: TaskState, gates: TaskGates, elapsedMs: number): GateError | null {
  const tokens = totalTokens(task.usage) - totalTokens(task.budget.usage);
  const cost = task.costUsd - task.budget.costUsd;
  elapsedMs -= task.budget.elapsedMs;
  if (gates.tokens !== null && tokens >= gates.tokens) {
    return new GateError('tokens', 'task', `token gate: ${fmt(tokens)} tokens used, limit ${fmt(gates.tokens)}`);
  }
  if (gates.costUsd !== null && cost >= gates.costUsd) {
    return new GateError('cost', 'task', `cost gate: $${cost.toFixed(2)} spent, limit $${gates.costUsd.toFixed(2)}`);
  }
  if (gates.timeMs !== null && elapsedMs >= gates.timeMs) {
    return new GateError('time', 'task', `time gate: ran ${Math.round(elapsedMs / 1000)}s, limit ${Math.round(gates.timeMs / 1000)}s`);
  }
  return null;
}

export function checkFleetGates(fleet: FleetTotals, gates: FleetGates, elapsedMs: number): GateError | null {
  const tokens = totalTokens(fleet.usage);
  if (gates.tokens !== null && tokens >= gates.tokens) {
    return new GateError('fleet_tokens', 'fleet', `fleet token gate: ${fmt(tokens)} tokens used, limit ${fmt(gates.tokens)}`);
  }
  if (gates.costUsd !== null && fleet.costUsd >= gates.costUsd) {
    return new GateError('fleet_cost', 'fleet', `fleet cost gate: $${fleet.costUsd.toFixed(2)} spent, limit $${gates.costUsd.toFixed(2)}`);
  }
  if (gates.timeMs !== null && elapsedMs >= gates.timeMs) {
    return new GateError('fleet_time', 'fleet', `fleet time gate: ran ${Math.round(elapsedMs / 1000)}s, limit ${Math.round(gates.timeMs / 1000)}s`);
  }
  return null;
}

/**
 * A failure's fingerprint, for the no-progress gate: two attempts in a row with the same fingerprint mean
 * the loop is not getting anywhere. Digits are blanked so timings and counters in output do not hide a repeat.
 */
export function failureFingerprint(outcome: string, evidence: string): string {
  // Test counts (checks.ts countsMarker) are kept: 9 failing then 1 failing is progress, not a repeat.
  const counts = [...evidence.matchAll(/^Failing tests: (\d+) of (\d+)$/gm)].map((m) => `failing=${m[1]}/${m[2]} `).join('');
  return `${outcome}:${counts}${evidence.replace(/\d+(\.\d+)?/g, '#').replace(/\s+/g, ' ').trim().slice(-2000)}`;
}
