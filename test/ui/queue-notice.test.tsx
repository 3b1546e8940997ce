import { afterEach, describe, expect, test } from 'vitest';
import { cleanup } from 'ink-testing-library';
import { fakeTask } from '../helpers/fake-fleet.js';
import { setup, waitFor } from '../helpers/ui-render.js';

afterEach(() => cleanup());

describe('the workers at start, in the status line (with --queue)', () => {
  test('a warning that no worker takes jobs is shown as the headless run says it, sanitised', async () => {
    const message =
      'no worker takes jobs from redis://127.0.0.1:6379/0 yet (1 refusing: evil\u001b]52;c;SGVsbG8=\u0007): attempts wait until one does';
    const t = await setup({
      tasks: [fakeTask('T-1', { status: 'queued' })],
      startNotice: { level: 'warn', text: message },
    });
    expect(t.frame()).toContain('⚠ no worker takes jobs from redis://127.0.0.1:6379/0 yet (1 refusing: evil');
    expect(t.frame()).not.toContain('\u001b]52');
  });

  test('the count of workers is said without a warning sign, and a later warning replaces it', async () => {
    const t = await setup({
      tasks: [fakeTask('T-1', { status: 'queued' })],
      startNotice: { level: 'info', text: '3 worker(s) take jobs from redis://h:6379/0, 5 attempt(s) at once' },
    });
    expect(t.frame()).toContain('3 worker(s) take jobs from redis://h:6379/0, 5 attempt(s) at once');
    expect(t.frame()).not.toContain('⚠ 3 worker(s)');
    t.fleet.events.emit('log', { level: 'warn', message: 'Redis at redis://h:6379/0: connection refused; retrying' });
    await waitFor(() => t.frame().includes('⚠ Redis at redis://h:6379/0: connection refused; retrying'));
    expect(t.frame()).not.toContain('3 worker(s) take jobs');
  });
});
