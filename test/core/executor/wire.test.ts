import { describe, expect, it } from 'vitest';
import { GateError, RateLimitError, RefusedError, ResourceLimitError, StopError } from '../../../src/domain/errors.js';
import { fromWireError, toWireError } from '../../../src/core/executor/wire-error.js';
import { MalformedEventError, checkEvent } from '../../../src/core/executor/wire-events.js';
import { jobIdOf } from '../../../src/ports/attempt-queue.js';

describe('errors across the wire', () => {
  it('come back as the class the local path throws, with what the task runner settles them by', () => {
    const gate = fromWireError(toWireError(new GateError('fleet_cost', 'fleet', 'fleet cost gate: $2.00 spent')));
    expect(gate).toBeInstanceOf(GateError);
    expect(gate).toMatchObject({ gate: 'fleet_cost', scope: 'fleet', message: 'fleet cost gate: $2.00 spent' });
    expect(fromWireError(toWireError(new StopError('stopping')))).toBeInstanceOf(StopError);
    const limit = fromWireError(toWireError(new RateLimitError('usage limit reached', 1_800_000_000_000, 'usage')));
    expect(limit).toBeInstanceOf(RateLimitError);
    expect(limit).toMatchObject({ resetAt: 1_800_000_000_000, kind: 'usage' });
    const emfile = fromWireError(toWireError(Object.assign(new Error('spawn failed'), { code: 'EMFILE' })));
    expect(emfile).toBeInstanceOf(ResourceLimitError);
    expect((emfile as ResourceLimitError).code).toBe('EMFILE');
    expect(fromWireError(toWireError(new RefusedError('dirty worktree')))).toBeInstanceOf(RefusedError);
    const plain = fromWireError(toWireError(new Error('boom')));
    expect(plain.constructor).toBe(Error);
    expect(plain.message).toBe('boom');
  });

  it('a detail that does not fit its class makes a plain Error, never a gate or limit the worker made up', () => {
    const gate = fromWireError({ kind: 'gate', message: 'x', detail: { gate: 'everything', scope: 'fleet' } });
    expect(gate).not.toBeInstanceOf(GateError);
    expect(gate.message).toMatch(/cannot name/);
    expect(fromWireError({ kind: 'resource-limit', message: 'y', detail: { code: 'EBOGUS' } })).not.toBeInstanceOf(
      ResourceLimitError,
    );
    expect(
      fromWireError({ kind: 'rate-limit', message: 'z', detail: { resetAt: 'soon', limit: 'huge' } }),
    ).toMatchObject({ resetAt: null, kind: 'rate' });
    expect(fromWireError({ kind: 'error', message: 'm'.repeat(10_000) }).message).toHaveLength(4_000);
  });
});

describe("a worker's events as the coordinator takes them", () => {
  it('passes well-formed events through as they are', () => {
    const usage = {
      kind: 'agent',
      role: 'implementer',
      model: 'm',
      event: { type: 'usage', model: 'm', usage: { input: 1, output: 2, cacheWrite: 0, cacheRead: 3 }, costUsd: 0.5 },
    };
    expect(checkEvent(usage)).toEqual(usage);
    expect(checkEvent({ kind: 'phase', phase: 'verify' })).toEqual({ kind: 'phase', phase: 'verify' });
    expect(checkEvent({ kind: 'pushed', branch: 'loop/T-1', commit: 'a'.repeat(40) })).toEqual({
      kind: 'pushed',
      branch: 'loop/T-1',
      commit: 'a'.repeat(40),
    });
  });

  it.each([
    ['an unknown kind', { kind: 'delete-everything' }, /kind "delete-everything" is unknown/],
    ['a phase that does not exist', { kind: 'phase', phase: 'deploy' }, /phase "deploy" is none of/],
    [
      'negative tokens',
      {
        kind: 'agent',
        role: 'explorer',
        model: 'm',
        event: { type: 'usage', model: 'm', usage: { input: -5, output: 0, cacheWrite: 0, cacheRead: 0 } },
      },
      /usage.input is not a count/,
    ],
    [
      'a cost that is not a price',
      {
        kind: 'agent',
        role: 'explorer',
        model: 'm',
        event: { type: 'usage', model: 'm', usage: { input: 1, output: 0, cacheWrite: 0, cacheRead: 0 }, costUsd: -1 },
      },
      /costUsd/,
    ],
    [
      'a role that does not exist',
      { kind: 'agent', role: 'admin', model: 'm', event: { type: 'text', text: 'x' } },
      /role/,
    ],
    [
      'a worker id with a terminal escape',
      { kind: 'claimed', worker: { id: 'w\u001b]52;c;x\u0007', host: 'h', concurrency: 1 } },
      /worker id/,
    ],
    [
      'a pushed commit that is not a commit id',
      { kind: 'pushed', branch: 'loop/T-1', commit: 'HEAD; rm -rf /' },
      /not a commit id/,
    ],
    ['a result with an unknown outcome', { kind: 'result', result: { outcome: 'merged' } }, /outcome "merged"/],
    ['an error of an unknown kind', { kind: 'failed', error: { kind: 'panic', message: 'x' } }, /error kind/],
    ['not an object at all', 'claimed', /event is not an object/],
  ])('refuses %s, saying what is wrong', (_, event, message) => {
    expect(() => checkEvent(event)).toThrow(MalformedEventError);
    expect(() => checkEvent(event)).toThrow(message);
  });
});

describe('job ids', () => {
  it('are the task and the attempt; a rerun after an interruption is a job of its own', () => {
    expect(jobIdOf('T-1', 2)).toBe('T-1:2');
    expect(jobIdOf('T-1', 2, 0)).toBe('T-1:2');
    expect(jobIdOf('T-1', 2, 1)).toBe('T-1:2.1');
  });
});
