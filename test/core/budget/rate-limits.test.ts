import { describe, expect, it } from 'vitest';
import { RateLimitError } from '../../../src/domain/errors.js';
import {
  BACKOFF_FIRST_MS,
  BACKOFF_MAX_MS,
  RateLimits,
  holdText,
  type RateLimitHost,
} from '../../../src/core/budget/rate-limits.js';
import { fakeEngine, type FakeEngine } from '../../helpers/fake-engine.js';
import type { FakeScript } from '../../helpers/fake-model.js';

/** `check: the-check` passes when the worktree has done.txt; the implementer writes it. */
function engine(
  front: string,
  items: string,
  script: FakeScript,
  options: Parameters<typeof fakeEngine>[2] = {},
): Promise<FakeEngine> {
  let e!: FakeEngine;
  const made = fakeEngine(`check: the-check\n${front}`, items, {
    script: (call) => {
      const turn = script(call);
      return call.role === 'implementer' ? { edits: { 'done.txt': 'x' }, ...turn } : turn;
    },
    run: (_c, o) => ({ exitCode: e.git.files(o.cwd).has('done.txt') ? 0 : 1 }),
    ...options,
  });
  return made.then((x) => (e = x));
}

const limit = (ms: number | null, kind: RateLimitError['kind'] = 'rate') =>
  new RateLimitError(
    `Messages API error (HTTP 429, rate_limit_error): slow down`,
    ms === null ? null : Date.now() + ms,
    kind,
  );

/** In order: `T-1 running` (a task starts), `T-1 call` (a model call answered), `hold` (the fleet holds). */
function timeline(e: FakeEngine): string[] {
  const out: string[] = [];
  e.fleet.events.on('task', ({ task, previousStatus }) => {
    if (task.status === 'running' && previousStatus !== 'running') out.push(`${task.id} running`);
  });
  e.fleet.events.on('usage', ({ id }) => out.push(`${id} call`));
  let held = false;
  e.fleet.events.on('fleet', (s) => {
    if (s.hold !== undefined && !held) out.push('hold');
    held = s.hold !== undefined;
  });
  return out;
}

describe('a rate or usage limit holds the fleet instead of using up an attempt', () => {
  it('requeues the task (its attempt not used up), holds the fleet until the reset, resumes and verifies it', async () => {
    let refused = 0;
    // One attempt only: an attempt used up by the limit would fail the task on the attempts gate.
    const e = await engine('gates:\n  attempts: 1', '- [ ] T-1 One', ({ role }) =>
      role === 'explorer' && refused++ === 0 ? { refuse: limit(60, 'usage') } : {},
    );
    const holds: Array<{ reason: string; until: string | null }> = [];
    e.fleet.events.on('fleet', (s) => s.hold && holds.push(s.hold));
    e.fleet.start();
    await new Promise((r) => setTimeout(r, 20));
    expect(e.fleet.summary()).toMatchObject({ state: 'paused', hold: { reason: 'usage limit' } });
    const waiting = e.fleet.task('T-1')!;
    expect(waiting.status).toBe('queued');
    expect(waiting.attempts.map((a) => a.outcome)).toEqual(['interrupted']);
    await e.fleet.whenIdle();
    await e.fleet.stop();
    const t = e.fleet.task('T-1')!;
    expect(t.status).toBe('verified');
    expect(t.attempt).toBe(1);
    expect(t.attempts.filter((a) => a.outcome !== 'interrupted').map((a) => [a.n, a.outcome])).toEqual([
      [1, 'verified'],
    ]);
    expect(holds[0]!.until).not.toBeNull();
    expect(e.fleet.summary().hold).toBeUndefined();
  });

  it('refuses a call about to start while the fleet holds: that task is requeued too, and no call starts until the reset', async () => {
    let refused = false;
    const admitted: Array<{ task: string; at: number }> = [];
    let holdFrom = 0;
    let holdTo = 0;
    const e = await engine('concurrency: 2', '- [ ] T-1 One\n- [ ] T-2 Two', ({ role, task }) => {
      admitted.push({ task, at: Date.now() });
      if (task === 'T-1' && role === 'explorer' && !refused) {
        refused = true;
        return { refuse: limit(80) };
      }
      // T-2's explorer is mid-call when T-1 is refused; its next call would start during the hold
      return task === 'T-2' && role === 'explorer' ? { delayMs: 20 } : {};
    });
    e.fleet.events.on('fleet', (s) => {
      if (s.hold !== undefined && holdFrom === 0) holdFrom = Date.now();
      if (s.hold === undefined && holdFrom !== 0 && holdTo === 0) holdTo = Date.now();
    });
    e.fleet.start();
    await e.fleet.whenIdle();
    await e.fleet.stop();
    expect(holdTo - holdFrom).toBeGreaterThanOrEqual(60);
    expect(admitted.filter((c) => c.at > holdFrom + 5 && c.at < holdTo)).toEqual([]);
    const t2 = e.fleet.task('T-2')!;
    expect(t2.attempts.find((a) => a.outcome === 'interrupted')?.reason).toMatch(/paused for a limit/);
    for (const id of ['T-1', 'T-2']) {
      expect(e.fleet.task(id)!.status).toBe('verified');
      expect(e.fleet.task(id)!.attempt).toBe(1);
    }
  });

  it('sends one probe after a hold: the second task starts only once a call has answered', async () => {
    let refusals = 0;
    const e = await engine('concurrency: 2', '- [ ] T-1 One\n- [ ] T-2 Two', ({ role }) =>
      role === 'explorer' && refusals++ < 2 ? { refuse: limit(40) } : { delayMs: 5 },
    );
    const seen = timeline(e);
    e.fleet.start();
    await e.fleet.whenIdle();
    await e.fleet.stop();
    const after = seen.slice(seen.lastIndexOf('hold') + 1);
    // Without the probe rule both tasks start together the moment the hold ends.
    expect(after.slice(0, 3)).toEqual(['T-1 running', 'T-1 call', 'T-2 running']);
    expect(e.fleet.tasks().map((t) => t.status)).toEqual(['verified', 'verified']);
  });

  it('ends the run on the fleet time gate when the hold lasts past it; the task stays queued', async () => {
    const e = await engine('gates:\n  fleet_time: 0.15', '- [ ] T-1 One', ({ role }) =>
      role === 'explorer' ? { refuse: limit(10_000, 'usage') } : {},
    );
    const started = Date.now();
    e.fleet.start();
    await e.fleet.whenIdle();
    await e.fleet.stop();
    expect(Date.now() - started).toBeLessThan(2000);
    expect(e.fleet.stoppedBy).toBe('fleet_time');
    expect(e.fleet.task('T-1')!.status).toBe('queued');
    expect(e.fleet.task('T-1')!.attempts.every((a) => a.outcome === 'interrupted')).toBe(true);
  });

  it('with --no-wait, fails the task with the limit as its reason and stops the run', async () => {
    const noWait = await engine(
      'concurrency: 1',
      '- [ ] T-1 One\n- [ ] T-2 Two',
      ({ role }) => (role === 'explorer' ? { refuse: limit(60_000, 'usage') } : {}),
      { noWait: true },
    );
    noWait.fleet.start();
    await noWait.fleet.whenIdle();
    await noWait.fleet.stop();
    const t1 = noWait.fleet.task('T-1')!;
    expect(t1.status).toBe('failed');
    expect(t1.reason).toMatch(/rate_limit_error/);
    expect(noWait.fleet.task('T-2')!.status).toBe('queued');
    expect(noWait.fleet.summary().hold).toBeUndefined();
  });
});

describe('the backoff and the probe, on their own', () => {
  function host() {
    const calls: string[] = [];
    let now = 1_000_000;
    let holding = false;
    const h: RateLimitHost & { calls: string[]; advance(ms: number): void; release(): void } = {
      calls,
      now: () => now,
      hold: (reason, until, backoff) => {
        holding = true;
        calls.push(`hold ${reason} +${until - now}${backoff ? ' backoff' : ''}`);
      },
      holding: () => holding,
      probe: (on) => calls.push(`probe ${on}`),
      stop: (reason) => calls.push(`stop ${reason}`),
      advance: (ms) => (now += ms),
      release: () => (holding = false),
    };
    return h;
  }

  it('backs off 30 s, 1 m, 2 m … up to 30 min when no reset is named, and starts again after an answered call', () => {
    const h = host();
    const limits = new RateLimits(h, false);
    const waits: number[] = [];
    for (let i = 0; i < 8; i++) {
      h.calls.length = 0;
      expect(limits.limited(new RateLimitError('429', null, 'rate'))).toBe('wait');
      waits.push(Number(/\+(\d+)/.exec(h.calls.find((c) => c.startsWith('hold'))!)![1]));
      h.release();
    }
    expect(waits).toEqual([30_000, 60_000, 120_000, 240_000, 480_000, 960_000, BACKOFF_MAX_MS, BACKOFF_MAX_MS]);
    limits.answered();
    h.calls.length = 0;
    limits.limited(new RateLimitError('429', null, 'rate'));
    expect(h.calls).toContain(`hold rate limit +${BACKOFF_FIRST_MS} backoff`);
  });

  it('takes calls refused together as one limit, keeps the later reset, and probes until a call answers', () => {
    const h = host();
    const limits = new RateLimits(h, false);
    limits.limited(new RateLimitError('429', null, 'rate'));
    limits.limited(new RateLimitError('429', null, 'rate'));
    limits.limited(new RateLimitError('usage', h.now() + 90_000, 'usage'));
    expect(h.calls).toEqual(['probe true', 'hold rate limit +30000 backoff', 'hold usage limit +90000']);
    expect(() => limits.beforeCall()).toThrow(/paused for a limit/);
    h.release();
    expect(() => limits.beforeCall()).not.toThrow();
    expect(limits.probing).toBe(true);
    limits.answered();
    expect(limits.probing).toBe(false);
    expect(h.calls.at(-1)).toBe('probe false');
  });

  it('says when the fleet resumes: the local time of a reset, a countdown for a backoff', () => {
    const at = new Date(2026, 0, 2, 5, 0, 0).getTime();
    expect(holdText({ reason: 'usage limit', until: new Date(at).toISOString() }, at - 3_600_000)).toBe(
      'paused: usage limit, resumes 05:00',
    );
    expect(holdText({ reason: 'rate limit', until: new Date(at).toISOString(), backoff: true }, at - 120_000)).toBe(
      'paused: rate limit, resumes in 2m',
    );
    expect(holdText({ reason: 'rate limit', until: null }, at)).toBe('paused: rate limit');
  });
});
