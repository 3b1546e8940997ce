import { describe, expect, it } from 'vitest';
import { unsandboxedDemoNotice } from '../../../src/commands/demo-sandbox.js';
import { renderReport } from '../../../src/core/report/morning-report.js';
import { sandboxNotice } from '../../../src/core/report/sandbox-notice.js';
import type { SandboxCause } from '../../../src/domain/sandbox-cause.js';
import type { TaskStatus } from '../../../src/domain/types.js';
import { defaultConfig, fakeTask } from '../../helpers/fake-fleet.js';

const APPARMOR: SandboxCause = {
  kind: 'apparmor',
  message:
    'AppArmor lets only programs with a profile make user namespaces (kernel.apparmor_restrict_unprivileged_userns=1), and none covers /usr/bin/bwrap',
  fix: 'load the profile Ubuntu ships for bubblewrap: sudo apparmor_parser -r /etc/apparmor.d/bwrap-userns-restrict',
};

describe("the run's first line when the sandbox is not in force", () => {
  it('is absent when sandboxed', () => {
    expect(sandboxNotice('auto', true, APPARMOR)).toBeNull();
  });

  it('names the cause and its fix under sandbox: auto', () => {
    expect(sandboxNotice('auto', false, APPARMOR)).toBe(
      `no sandbox (bubblewrap cannot run here: ${APPARMOR.message}) — checks of agent-written code are refused and the agent shell is off; ` +
        `command-line agents run unsandboxed. Fix: ${APPARMOR.fix}; or write \`sandbox: off\` to run checks unsandboxed`,
    );
  });

  it('without a diagnosis keeps the generic line', () => {
    expect(sandboxNotice('auto', false)).toBe(
      'no sandbox (bubblewrap cannot run here) — checks of agent-written code are refused and the agent shell is off; command-line agents run unsandboxed. Install bubblewrap, or write `sandbox: off` to run checks unsandboxed',
    );
  });

  it('under sandbox: off says what runs unsandboxed, whatever the cause', () => {
    expect(sandboxNotice('off', false, APPARMOR)).toMatch(
      /^sandbox: off — checks, the agent shell and command-line agents run agent-written code unsandboxed/,
    );
  });

  it("the demo's first line names the cause and the fix too", () => {
    expect(unsandboxedDemoNotice(APPARMOR)).toBe(
      `loopfleet demo: no sandbox (bubblewrap cannot run here: ${APPARMOR.message}), so the demo's checks run unsandboxed — its agent is the bundled ` +
        `scripted model and its checks are the demo project's own files; a real repository is refused without it (fix: ${APPARMOR.fix})`,
    );
    expect(unsandboxedDemoNotice(null)).toMatch(
      /^loopfleet demo: no sandbox \(bubblewrap cannot run here\), so .*\(fix: see docs\/security\.md, "When bubblewrap cannot run"\)$/,
    );
  });

  it("the morning report's Unsandboxed line names them as well", () => {
    const task = fakeTask('T-1', { status: 'failed' });
    const counts = {
      queued: 0,
      running: 0,
      verified: 0,
      failed: 1,
      conflict: 0,
      merged: 0,
      discarded: 0,
      'awaiting-approval': 0,
    } as Record<TaskStatus, number>;
    const text = renderReport({
      repoRoot: '/repo',
      base: 'main',
      startedAt: '2026-01-01T00:00:00.000Z',
      endedAt: '2026-01-01T08:00:00.000Z',
      summary: {
        state: 'finished',
        counts,
        totals: { usage: task.usage, costUsd: 0, elapsedMs: 0, startedAt: null },
        stoppedBy: null,
      },
      tasks: [task],
      ran: new Set(['T-1']),
      config: defaultConfig(),
      sandboxed: false,
      sandboxCause: APPARMOR,
      exitCode: 1,
    });
    expect(text).toContain(`**Unsandboxed:** ${sandboxNotice('auto', false, APPARMOR)}.`);
  });
});
