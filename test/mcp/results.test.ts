import { describe, expect, it } from 'vitest';
import { landingRefusal } from '../../src/mcp/autonomy-gate.js';
import { keyRefusals } from '../../src/mcp/key-limits.js';
import { cleaned, data, guarded, refusal } from '../../src/mcp/results.js';
import { LockedError, RefusedError, UsageError } from '../../src/domain/errors.js';

const HOSTILE = 'plan \u001b]52;c;SGVsbG8=\u0007 \u001b[2Jdone\u202e \u009b31m';

describe('the results of the MCP tools', () => {
  it('clean every string of the data, keys and nested values included, and keep the rest as it is', () => {
    const value = { [HOSTILE]: [{ plan: HOSTILE, n: 3, ok: true, none: null }] };
    const out = cleaned(value);
    expect(JSON.stringify(out)).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
    expect(Object.values(out)[0]).toEqual([
      { plan: 'plan ␛]52;c;SGVsbG8=␇ done⟨U+202E⟩ ', n: 3, ok: true, none: null },
    ]);
    expect(data(value).content[0]).toMatchObject({ type: 'text' });
    expect(refusal(HOSTILE)).toEqual({
      content: [{ type: 'text', text: 'plan ␛]52;c;SGVsbG8=␇ done⟨U+202E⟩ ' }],
      isError: true,
    });
  });

  it("answer loopfleet's own errors with their words, and a bug with its message while its stack goes to the log", async () => {
    const log: string[] = [];
    const fail = (error: Error) =>
      guarded(
        () => {
          throw error;
        },
        (line) => log.push(line),
        true,
      );
    expect(await fail(new UsageError('bad input'))).toEqual(
      refusal('bad input\nnothing was written: BACKLOG.md is as it was'),
    );
    expect(await fail(new RefusedError('T-1 is merged: only verified tasks can be merged'))).toEqual(
      refusal('T-1 is merged: only verified tasks can be merged'),
    );
    expect((await fail(new LockedError(42, '/r/.loop-worktrees/fleet.lock'))).content[0]).toMatchObject({
      text: expect.stringMatching(/^another loopfleet \(pid 42\) is running/),
    });
    expect(log).toEqual([]);
    expect(await fail(new TypeError('x is undefined'))).toEqual(refusal('internal error: x is undefined'));
    expect(log).toHaveLength(1);
    expect(log[0]).toMatch(/^internal error: TypeError: x is undefined\n\s+at /);
  });
});

describe('what a client may land, and which keys it may write', () => {
  it('merges and discards only under autonomy auto, naming the command and the key of a person', () => {
    expect(landingRefusal('merge', 'T-3', 'auto')).toBeNull();
    expect(landingRefusal('discard', 'T-3', 'auto')).toBeNull();
    expect(landingRefusal('merge', 'T-3', 'review')).toBe(
      'refused: autonomy is `review`, so a person merges — run `loopfleet merge T-3` or press m in the TUI (a client may merge only under `autonomy: auto`)',
    );
    expect(landingRefusal('discard', 'T-3', 'plan')).toMatch(
      /^refused: autonomy is `plan`, so a person discards — run `loopfleet discard T-3` or press d in the TUI/,
    );
  });

  it('refuses the keys that loosen what the person decided, and only those', () => {
    expect(
      keyRefusals({
        check: 'npm test',
        attempts: '2',
        autonomy: 'review',
        review: 'true',
        prove: 'TRUE',
        priority: 'high',
        after: 'T-1',
      }),
    ).toEqual([]);
    expect(
      keyRefusals({
        autonomy: ' Auto ',
        setup: 'npm ci',
        files: 'a',
        land: 'merge',
        review: 'False',
        prove: 'false',
      }).map((line) => line.split(':')[0]),
    ).toEqual(['keys.autonomy', 'keys.setup', 'keys.files', 'keys.land', 'keys.review', 'keys.prove']);
  });
});
