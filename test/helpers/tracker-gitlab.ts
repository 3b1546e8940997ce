import { findRepo } from '../../src/commands/repo.js';
import { openSession } from '../../src/commands/session.js';
import type { Harness } from './fleet-harness.js';
import { FakeModel, type FakeScript } from './fake-model.js';
import type { FakeGitLab } from './fake-gitlab.js';

/**
 * A real session on `root` whose tracker (and forge) is the loopback GitLab: the scripted model,
 * GITLAB_TOKEN and GITLAB_API_URL pointing at `gitlab`, the clients' waits shortened (never skipped).
 */
export async function openGitLabTrackerFleet(
  root: string,
  gitlab: FakeGitLab,
  script: FakeScript,
  options: { watch?: boolean } = {},
): Promise<Harness & { logs: string[] }> {
  const repo = await findRepo(root);
  const model = new FakeModel(script);
  const session = await openSession(repo, {
    overrides: {},
    autoMerge: false,
    watch: options.watch ?? false,
    env: {
      ...process.env,
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
      GITLAB_TOKEN: gitlab.token,
      GITLAB_API_URL: gitlab.url,
      GH_TOKEN: '',
      GITHUB_TOKEN: '',
    },
    services: (s) => ({ ...s, model, cliModel: model }),
    trackerTuning: { msPerSecond: 10 },
    forgeTuning: { msPerSecond: 10 },
  });
  const logs: string[] = [];
  session.fleet.events.on('log', (e: { message: string }) => logs.push(e.message));
  return { fleet: session.fleet, model, session, logs };
}

/** The issue's notes that loopfleet's status marker begins. */
export function statusNotes(gitlab: FakeGitLab, issue: number): string[] {
  return gitlab.issueNotesOn(issue).filter((n) => n.startsWith('<!-- loopfleet:status -->'));
}

/** The state labels (`loopfleet:…`) the issue carries. */
export function stateLabelsOn(gitlab: FakeGitLab, issue: number): string[] {
  return gitlab.issue(issue).labels.filter((l) => l.startsWith('loopfleet:'));
}
