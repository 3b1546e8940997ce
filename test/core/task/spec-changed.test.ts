/**
 * {@link specChanged}: a record is refreshed from its backlog item exactly when the item says something
 * the record does not — the gates compared value by value, whatever order their keys were written in.
 */
import { describe, expect, it } from 'vitest';
import { newRecord, specChanged } from '../../../src/core/task/edits.js';
import type { TaskGates, TaskSpec } from '../../../src/domain/types.js';

const spec: TaskSpec = { id: 'T-1', title: 'One', line: 3, done: false, description: '', after: [], files: [] };
const gates: TaskGates = { attempts: 3, tokens: 500_000, timeMs: 1_800_000, costUsd: null };

describe('specChanged', () => {
  it('is false for the record made from the same item and gates, its keys in another order', () => {
    const record = newRecord(spec, gates, '2026-01-01T00:00:00.000Z');
    expect(specChanged(record, spec, gates)).toBe(false);
    record.gates = { costUsd: null, timeMs: 1_800_000, tokens: 500_000, attempts: 3 };
    expect(specChanged(record, spec, gates)).toBe(false);
  });

  it('is true when a gate, the title or every: differs, or the record has no gates or one more', () => {
    const record = newRecord(spec, gates, '2026-01-01T00:00:00.000Z');
    expect(specChanged(record, spec, { ...gates, tokens: 1 })).toBe(true);
    expect(specChanged(record, spec, { ...gates, costUsd: 2 })).toBe(true);
    expect(specChanged(record, { ...spec, title: 'Other' }, gates)).toBe(true);
    expect(specChanged(record, { ...spec, everyMs: 60_000 }, gates)).toBe(true);
    expect(specChanged({ ...record, gates: undefined }, spec, gates)).toBe(true);
    expect(specChanged({ ...record, gates: { ...gates, extra: 1 } as TaskGates }, spec, gates)).toBe(true);
  });
});
