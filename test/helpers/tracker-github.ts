import { findRepo } from '../../src/commands/repo.js';
import { openSession } from '../../src/commands/session.js';
import type { Harness } from './fleet-harness.js';
import { FakeModel, type FakeScript } from './fake-model.js';
import type { FakeGitHub } from './fake-github.js';

/**
 * A real session on `root` whose tracker is the loopback GitHub: the scripted model, GH_TOKEN and
 * GITHUB_API_URL pointing at `github`, the tracker's and the forge's writes unspaced (GitHub asks for a
 * second between writes; the fake does not, and the spacing is Octokit's own, tested with the PR path).
 */
export async function openTrackerFleet(
  root: string,
  github: FakeGitHub,
  script: FakeScript,
  options: { autoMerge?: boolean; watch?: boolean } = {},
): Promise<Harness & { logs: string[] }> {
  const repo = await findRepo(root);
  const model = new FakeModel(script);
  const session = await openSession(repo, {
    overrides: {},
    autoMerge: options.autoMerge ?? false,
    watch: options.watch ?? false,
    env: {
      ...process.env,
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
      GH_TOKEN: github.token,
      GITHUB_API_URL: github.url,
      GITHUB_TOKEN: '',
      GITLAB_TOKEN: '',
    },
    services: (s) => ({ ...s, model, cliModel: model }),
    trackerTuning: { writeSpacingMs: 0, msPerSecond: 10 },
    forgeTuning: { writeSpacingMs: 0, msPerSecond: 10 },
  });
  const logs: string[] = [];
  session.fleet.events.on('log', (e: { message: string }) => logs.push(e.message));
  return { fleet: session.fleet, model, session, logs };
}

/** The issue's comments that loopfleet's status marker begins. */
export function statusComments(github: FakeGitHub, issue: number): string[] {
  return github.commentsOn(issue).filter((c) => c.startsWith('<!-- loopfleet:status -->'));
}
