import { findRepo } from '../../src/commands/repo.js';
import { openSession } from '../../src/commands/session.js';
import type { Harness } from './fleet-harness.js';
import { FakeModel, type FakeScript } from './fake-model.js';
import type { FakeLinear } from './fake-linear.js';

/**
 * A real session on `root` whose tracker is the loopback Linear: the scripted model, LINEAR_API_KEY and
 * LINEAR_API_URL pointing at `linear` (a wrong `key` for the refusal), rate-limit waits shortened a
 * hundredfold (never skipped).
 */
export async function openLinearFleet(
  root: string,
  linear: FakeLinear,
  script: FakeScript,
  options: { autoMerge?: boolean; key?: string } = {},
): Promise<Harness & { logs: string[] }> {
  const repo = await findRepo(root);
  const model = new FakeModel(script);
  const session = await openSession(repo, {
    overrides: {},
    autoMerge: options.autoMerge ?? false,
    watch: false,
    env: {
      ...process.env,
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
      LINEAR_API_KEY: options.key ?? linear.key,
      LINEAR_API_URL: linear.url,
      GH_TOKEN: '',
      GITHUB_TOKEN: '',
      GITLAB_TOKEN: '',
    },
    services: (s) => ({ ...s, model, cliModel: model }),
    trackerTuning: { msPerSecond: 10 },
  });
  const logs: string[] = [];
  session.fleet.events.on('log', (e: { message: string }) => logs.push(e.message));
  return { fleet: session.fleet, model, session, logs };
}

/** The issue's comments that loopfleet's status marker begins. */
export function linearStatusComments(linear: FakeLinear, identifier: string): string[] {
  return linear
    .issue(identifier)
    .comments.map((c) => c.body)
    .filter((b) => b.startsWith('<!-- loopfleet:status -->'));
}
