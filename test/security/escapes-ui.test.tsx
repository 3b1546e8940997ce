import { afterEach, describe, expect, test } from 'vitest';
import { cleanup, render } from 'ink-testing-library';
import { App } from '../../src/ui/app.js';
import { FakeFleet, fakeTask } from '../helpers/fake-fleet.js';
import { KEY, resize, sleep, waitFor } from '../helpers/ui-render.js';

afterEach(cleanup);

/**
 * The status line and the detail pane's header show agent text (a log line, a title from a TODO or an
 * issue) in its visible form: the raw frame — not one with escape sequences stripped afterwards — holds
 * no ESC, C1 or bidi control, so no hyperlink, colour or title reaches the terminal.
 */

const LINK = '\u001b]8;;https://evil.example/\u001b\\click\u001b]8;;\u001b\\';
const HOSTILE = `${LINK} \u001b[31mred\u001b[0m \u001b]0;PWNED\u0007 \u009b2J \u202eevil`;
const UNSAFE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

async function view(fleet: FakeFleet) {
  // color off: every ESC in the frame would be the agent's, none Ink's own.
  const r = render(<App fleet={fleet} color={false} onEditBacklog={async () => {}} bell={false} />);
  resize(r.stdout, 160, 30);
  await sleep(20);
  return r;
}

describe('agent text in the interactive view', () => {
  test('the status line shows an engine warning quoting an agent in its visible form', async () => {
    const fleet = new FakeFleet({ tasks: [fakeTask('T-1')] });
    const r = await view(fleet);
    fleet.log('warn', `agent said ${HOSTILE}\nsecond line`, 'T-1');
    await waitFor(() => expect(r.lastFrame()).toContain('agent said'));
    const frame = r.lastFrame() ?? '';
    expect(frame).toContain(
      '⚠ T-1: agent said ␛]8;;https://evil.example/␛\\click␛]8;;␛\\ red ␛]0;PWNED␇  ⟨U+202E⟩evil ⏎ second line',
    );
    expect(UNSAFE.exec(frame)).toBeNull();
  });

  test('the detail header shows a hostile title in its visible form, on one line', async () => {
    const fleet = new FakeFleet({
      tasks: [
        fakeTask('T-1', {
          title: `Fix it ${HOSTILE}\nT-9 fake`,
          status: 'failed',
          attempt: 1,
          reason: `veto ${HOSTILE}`,
        }),
      ],
    });
    const r = await view(fleet);
    r.stdin.write(KEY.enter);
    await waitFor(() => expect(r.lastFrame()).toContain('[1 Plan]'));
    const frame = r.lastFrame() ?? '';
    const header = frame.split('\n').find((l) => l.startsWith('── T-1'));
    expect(header).toContain('· Fix it ␛]8;;https://evil.example/␛\\click␛]8;;␛\\ red ␛]0;PWNED␇');
    expect(header).toContain('⏎ T-9 fake');
    expect(UNSAFE.exec(frame)).toBeNull();
  });
});
