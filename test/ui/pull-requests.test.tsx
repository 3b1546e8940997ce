import { afterEach, describe, expect, test } from 'vitest';
import { cleanup } from 'ink-testing-library';
import type { PrRecord } from '../../src/domain/types.js';
import { fakeTask } from '../helpers/fake-fleet.js';
import { KEY, rowOf, setup, waitFor } from '../helpers/ui-render.js';

afterEach(cleanup);

const pr = (over: Partial<PrRecord>): PrRecord => ({
  number: 12,
  url: 'https://github.com/acme/widgets/pull/12',
  state: 'open',
  draft: false,
  ci: 'pending',
  review: 'none',
  pushed: 'a'.repeat(40),
  pushedAttempt: 1,
  answered: [],
  ciAnswered: null,
  ...over,
});

describe('pull requests in the TUI', () => {
  test('each row says its PR, its CI and its review; the detail pane shows the URL', async () => {
    const t = await setup({
      rows: 40,
      tasks: [
        fakeTask('T-1', { title: 'One', status: 'verified', attempt: 1, pr: pr({ ci: 'passing' }) }),
        fakeTask('T-2', { title: 'Two', status: 'verified', attempt: 1, pr: pr({ number: 13, ci: 'failing' }) }),
        fakeTask('T-3', {
          title: 'Three',
          status: 'verified',
          attempt: 1,
          pr: pr({ number: 14, review: 'changes-requested', draft: true }),
        }),
        fakeTask('T-4', { title: 'Four', status: 'merged', attempt: 1, pr: pr({ number: 15, state: 'merged' }) }),
        fakeTask('T-5', { title: 'Five', status: 'verified', attempt: 1 }),
      ],
    });
    const frame = t.frame();
    expect(rowOf(frame, 'T-1')).toContain('PR #12 open ✓ci');
    expect(rowOf(frame, 'T-2')).toContain('PR #13 open ✗ci');
    expect(rowOf(frame, 'T-3')).toContain('PR #14 draft …ci changes requested');
    expect(rowOf(frame, 'T-4')).toContain('PR #15 merged');
    expect(rowOf(frame, 'T-5')).not.toContain('PR #');
    await t.press('m');
    await waitFor(() =>
      expect(t.frame()).toContain('Push loop/T-1 and open or update its pull request into main? y/n'),
    );
    await t.press('n');
    await t.press(KEY.enter, '5');
    await waitFor(() => expect(t.frame()).toContain('https://github.com/acme/widgets/pull/12'));
    expect(t.frame()).toContain('Pull request');
  });
});
