import { afterEach, describe, expect, it } from 'vitest';
import { FleetEmitter } from '../../../src/core/task/events.js';
import { EventHub } from '../../../src/web/server/event-hub.js';
import { fakeTask } from '../../helpers/fake-fleet.js';
import { unsafeAt } from '../../helpers/hostile-text.js';
import { eventually } from '../../helpers/wait.js';

const hubs: EventHub[] = [];
afterEach(() => {
  for (const hub of hubs.splice(0)) hub.close();
});

function hubOf(events: FleetEmitter) {
  const hub = new EventHub(events, 5);
  hubs.push(hub);
  const got: Array<{ event: string; data: Record<string, unknown> }> = [];
  const unsubscribe = hub.subscribe((event, data) => got.push({ event, data: JSON.parse(data) }));
  return { hub, got, unsubscribe };
}

const fleetSummary = (running: number) => ({
  state: 'running' as const,
  counts: { queued: 0, running, 'awaiting-approval': 0, verified: 0, merged: 0, discarded: 0, failed: 0, conflict: 0 },
  totals: { usage: { input: 0, output: 0, cacheWrite: 0, cacheRead: 0 }, costUsd: 0, elapsedMs: 0, startedAt: null },
  stoppedBy: null,
});

describe('EventHub', () => {
  it('sends one task message per id per window, the latest snapshot, after every event before it', async () => {
    const events = new FleetEmitter();
    const { got } = hubOf(events);
    events.emit('task', { task: fakeTask('T-1', { status: 'queued' }), previousStatus: null });
    events.emit('agent-text', { id: 'T-1', role: 'explorer', attempt: 1, text: 'looking' });
    events.emit('task', { task: fakeTask('T-1', { status: 'running', phase: 'explore' }), previousStatus: 'queued' });
    events.emit('fleet', fleetSummary(0));
    events.emit('fleet', fleetSummary(1));
    await eventually(() => (got.length >= 3 ? true : undefined), 5);
    expect(got.map((m) => m.event)).toEqual(['agent-text', 'task', 'fleet']);
    expect(got[1]!.data).toMatchObject({
      task: { id: 'T-1', status: 'running', phase: 'explore' },
      previousStatus: 'queued',
    });
    expect(got[2]!.data).toMatchObject({ counts: { running: 1 } });
  });

  it('coalesces a burst over 2,000 tasks to one message per task', async () => {
    const events = new FleetEmitter();
    const { got } = hubOf(events);
    for (const status of ['queued', 'running', 'verified'] as const)
      for (let i = 0; i < 2000; i++)
        events.emit('task', { task: fakeTask(`T-${i}`, { status }), previousStatus: null });
    await eventually(() => (got.length >= 2000 ? true : undefined), 5);
    expect(got).toHaveLength(2000);
    expect(new Set(got.map((m) => (m.data.task as { id: string }).id)).size).toBe(2000);
    for (const m of got) expect(m.data).toMatchObject({ task: { status: 'verified' } });
  });

  it('keeps every event that is not a snapshot, in order, and sanitises each', async () => {
    const events = new FleetEmitter();
    const { got } = hubOf(events);
    for (let i = 0; i < 5; i++)
      events.emit('agent-text', {
        id: 'T-1',
        role: 'implementer',
        attempt: 1,
        text: `${i}\u001b]8;;javascript:x\u001b\\\u001b[2J`,
      });
    events.emit('log', { level: 'warn', message: '\u009b31mred' });
    await eventually(() => (got.length >= 6 ? true : undefined), 5);
    expect(got.slice(0, 5).map((m) => m.data.text)).toEqual([0, 1, 2, 3, 4].map((i) => `${i}␛]8;;javascript:x␛\\`));
    expect(got[5]!.data.message).toBe('red');
    expect(unsafeAt(JSON.stringify(got))).toBeNull();
  });

  it('keeps nothing while nobody listens, and stops listening when closed', async () => {
    const events = new FleetEmitter();
    const { hub, got, unsubscribe } = hubOf(events);
    unsubscribe();
    events.emit('task', { task: fakeTask('T-1'), previousStatus: null });
    const again: string[] = [];
    hub.subscribe((event) => again.push(event));
    events.emit('log', { level: 'info', message: 'now' });
    await eventually(() => (again.length >= 1 ? true : undefined), 5);
    expect(again).toEqual(['log']);
    expect(got).toEqual([]);
    hub.close();
    expect(events.listenerCount('task') + events.listenerCount('log')).toBe(0);
  });
});
