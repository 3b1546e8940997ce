import { stripVTControlCharacters } from 'node:util';
import { cleanup, render } from 'ink-testing-library';
import { afterEach, describe, expect, test } from 'vitest';
import type { SandboxCause } from '../../src/domain/sandbox-cause.js';
import type { TaskStatus } from '../../src/domain/types.js';
import { FleetBar, type FleetBarProps } from '../../src/ui/fleet-bar.js';
import { STATUS_ORDER } from '../../src/ui/theme.js';

afterEach(cleanup);

const MISSING_USERNS: SandboxCause = {
  kind: 'userns-limit',
  message: 'user namespaces are switched off: user.max_user_namespaces is 0',
  fix: 'sudo sysctl -w user.max_user_namespaces=15000',
};

function bar(extra: Partial<FleetBarProps>): string[] {
  const counts = Object.fromEntries(STATUS_ORDER.map((s) => [s, 0])) as Record<TaskStatus, number>;
  const props: FleetBarProps = {
    repo: 'r',
    base: 'main',
    state: 'running',
    stoppedBy: null,
    counts,
    tokens: 0,
    costUsd: 0,
    elapsedMs: 0,
    gates: { tokens: null, costUsd: null, timeMs: null },
    sandboxed: false,
    sandbox: 'auto',
    columns: 400,
    rows: 3,
    ...extra,
  };
  return stripVTControlCharacters(render(<FleetBar {...props} />).lastFrame() ?? '').split('\n');
}

describe("the fleet bar's sandbox warning", () => {
  // One line, cut at the terminal's width (100 columns here): the cause comes first, so it is what shows.
  test('names what stops bubblewrap on this host first', () => {
    const warning = bar({ sandboxCause: MISSING_USERNS }).find((l) => l.includes('⚠'));
    expect(warning).toMatch(
      /^⚠ no sandbox \(bubblewrap cannot run here: user namespaces are switched off: user\.max_user_namespace/,
    );
  });

  test('without a diagnosis keeps the generic warning', () => {
    expect(bar({}).find((l) => l.includes('⚠'))).toContain('⚠ no sandbox (bubblewrap cannot run here) — ');
  });
});
