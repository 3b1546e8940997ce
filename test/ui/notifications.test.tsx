import { afterEach, describe, expect, test } from 'vitest';
import { cleanup } from 'ink-testing-library';
import { BELL } from '../../src/ui/use-bell.js';
import { mixedTasks } from '../helpers/ui-fixtures.js';
import { rowOf, setup, sleep, waitFor } from '../helpers/ui-render.js';

afterEach(cleanup);

const bells = (frames: string[]): number => frames.filter((f) => f.includes(BELL)).length;

describe('terminal bell', () => {
  test('rings when a task becomes verified, failed or conflict; not for other changes', async () => {
    const t = await setup({ tasks: mixedTasks() });
    t.fleet.update('T-2', { status: 'running', phase: 'explore' });
    t.fleet.update('T-1', { phase: 'verify' });
    await sleep(150);
    expect(bells(t.stdout.frames)).toBe(0);
    t.fleet.update('T-1', { status: 'verified', phase: null });
    expect(bells(t.stdout.frames)).toBe(1);
    t.fleet.update('T-1', { status: 'verified', reason: 'same status again' });
    expect(bells(t.stdout.frames)).toBe(1);
    t.fleet.update('T-2', { status: 'failed', reason: 'gate' });
    t.fleet.update('T-3', { status: 'conflict', reason: 'conflict' });
    expect(bells(t.stdout.frames)).toBe(3);
  });

  test('rings when the fleet goes idle or finishes', async () => {
    const t = await setup({ tasks: mixedTasks() });
    t.fleet.setState('paused');
    expect(bells(t.stdout.frames)).toBe(0);
    t.fleet.setState('idle');
    expect(bells(t.stdout.frames)).toBe(1);
    t.fleet.setState('finished');
    expect(bells(t.stdout.frames)).toBe(1);
    t.fleet.setState('running');
    t.fleet.setState('finished');
    expect(bells(t.stdout.frames)).toBe(2);
  });

  test('bell={false} stays silent', async () => {
    const t = await setup({ tasks: mixedTasks(), bell: false });
    t.fleet.update('T-1', { status: 'verified' });
    await waitFor(() => expect(rowOf(t.frame(), 'T-1')).toContain('✔ verified'));
    expect(bells(t.stdout.frames)).toBe(0);
  });
});

describe('engine notices', () => {
  test('warnings, errors and gates from the engine show in the status line', async () => {
    const t = await setup({ tasks: mixedTasks() });
    t.fleet.log('info', 'not shown');
    t.fleet.log('warn', 'BACKLOG.md: T-9 has no check, using the default', 'T-9');
    await waitFor(() => expect(t.frame()).toContain('⚠ T-9: BACKLOG.md: T-9 has no check'));
    t.fleet.events.emit('gate', {
      scope: 'fleet',
      id: null,
      gate: 'fleet_cost',
      reason: 'fleet cost gate: $25.10 spent, limit $25.00',
    });
    await waitFor(() => expect(t.frame()).toContain('fleet: fleet cost gate — fleet cost gate: $25.10 spent'));
    expect(t.frame()).not.toContain('not shown');
  });

  test('a fleet stopped by a gate says which one in the bar', async () => {
    const t = await setup({ tasks: mixedTasks() });
    t.fleet.setState('finished', 'fleet_tokens');
    await waitFor(() => expect(t.lines()[0]).toContain('✔ finished (stopped by the fleet_tokens gate)'));
  });
});
