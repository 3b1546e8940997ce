import { stripVTControlCharacters } from 'node:util';
import { cleanup, render } from 'ink-testing-library';
import { afterEach, describe, expect, test } from 'vitest';
import type { TaskStatus } from '../../src/domain/types.js';
import { FleetBar, type FleetBarProps } from '../../src/ui/fleet-bar.js';
import { STATUS_ORDER } from '../../src/ui/theme.js';

afterEach(cleanup);

function usageLine(counts: Partial<Record<TaskStatus, number>>, costUsd: number): string {
  const all = Object.fromEntries(STATUS_ORDER.map((s) => [s, counts[s] ?? 0])) as Record<TaskStatus, number>;
  const props: FleetBarProps = {
    repo: 'r',
    base: 'main',
    state: 'running',
    stoppedBy: null,
    counts: all,
    tokens: 1000,
    costUsd,
    elapsedMs: 0,
    gates: { tokens: null, costUsd: null, timeMs: null },
    sandboxed: true,
    columns: 200,
    rows: 2,
  };
  const lines = stripVTControlCharacters(render(<FleetBar {...props} />).lastFrame() ?? '').split('\n');
  return lines.find((l) => l.includes('tokens')) ?? '';
}

describe("the fleet bar's cost per verified task", () => {
  test('divides all the fleet spent by the tasks verified, merged ones included', () => {
    expect(usageLine({ verified: 1, merged: 1, failed: 2 }, 3)).toMatch(/cost \$3\.00\s+per verified \$1\.50/);
  });

  test('is absent while no task is verified, never $0 or infinite', () => {
    const line = usageLine({ failed: 2, running: 1 }, 0.4);
    expect(line).toMatch(/cost \$0\.40/);
    expect(line).not.toContain('per verified');
  });
});
