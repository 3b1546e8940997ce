import { afterEach, describe, expect, test } from 'vitest';
import { cleanup } from 'ink-testing-library';
import { mixedTasks } from '../helpers/ui-fixtures.js';
import { setup, waitFor } from '../helpers/ui-render.js';

afterEach(cleanup);

describe('fleet bar while the fleet holds for a limit', () => {
  test('says why and when it resumes, and goes back to the bare state when the hold ends', async () => {
    const t = await setup({ tasks: mixedTasks(), columns: 160 });
    const at = new Date();
    at.setHours(5, 0, 0, 0);
    if (at.getTime() <= Date.now()) at.setDate(at.getDate() + 1);
    t.fleet.events.emit('fleet', {
      ...t.fleet.summary(),
      state: 'paused',
      hold: { reason: 'usage limit', until: at.toISOString() },
    });
    await waitFor(() => expect(t.lines()[0]).toContain('paused: usage limit, resumes 05:00'));
    t.fleet.events.emit('fleet', {
      ...t.fleet.summary(),
      state: 'paused',
      hold: { reason: 'rate limit', until: new Date(Date.now() + 120_000).toISOString(), backoff: true },
    });
    await waitFor(() => expect(t.lines()[0]).toContain('paused: rate limit, resumes in 2m'));
    t.fleet.events.emit('fleet', { ...t.fleet.summary(), state: 'running' });
    await waitFor(() => expect(t.lines()[0]).toContain('▶ running'));
    expect(t.lines()[0]).not.toContain('resumes');
  });

  test('says the review capacity holds new tasks back, and stops saying it once it holds nothing', async () => {
    const t = await setup({ tasks: mixedTasks(), columns: 160 });
    const review = { running: 0, waiting: 2, capacity: 2, held: true, peak: 2, heldMs: 0 };
    t.fleet.events.emit('fleet', { ...t.fleet.summary(), state: 'idle', review });
    await waitFor(() => expect(t.lines()[0]).toContain('idle · waiting for review: 2 of 2'));
    t.fleet.events.emit('fleet', { ...t.fleet.summary(), state: 'running', review: { ...review, held: false } });
    await waitFor(() => expect(t.lines()[0]).toContain('▶ running'));
    expect(t.lines()[0]).not.toContain('waiting for review');
  });
});
