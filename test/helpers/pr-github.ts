import { expect } from 'vitest';
import { LowdbStateStore } from '../../src/adapters/store/lowdb-state.js';
import type { StateData } from '../../src/ports/state-store.js';
import { findRepo } from '../../src/commands/repo.js';
import { backlogRepo, openFleet, runFleet, type Harness } from './fleet-harness.js';
import type { FakeScript } from './fake-model.js';
import type { FakeGitHub } from './fake-github.js';
import { git } from './git-repo.js';
import { bareOrigin, remoteHead } from './pr-remote.js';

/**
 * Repositories whose tasks land as pull requests on a loopback GitHub ({@link FakeGitHub}) through the real
 * adapter, for the attack and fault suites: a task verified and published, a sync pass in a session of
 * its own, and the count of tasks per status afterwards.
 */

const CHECK = `if [ -f fixed.txt ]; then printf '# tests 2\\n# pass 2\\n# fail 0\\n'; else printf '# tests 2\\n# pass 1\\n# fail 1\\n'; exit 1; fi`;

export const fixIt: FakeScript = ({ role, attempt }) =>
  role === 'implementer' ? { edits: { 'fixed.txt': `attempt ${attempt}\n` } } : {};

export function githubEnv(github: FakeGitHub): NodeJS.ProcessEnv {
  return { GH_TOKEN: github.token, GITHUB_API_URL: github.url, GITHUB_TOKEN: '', GITLAB_TOKEN: '' };
}

/** A repository landing by PR on `github` (ready PRs unless `front` sets `pr:`; no sandbox: the check is the script above), with a bare `origin`. */
export async function prRepo(
  cleanups: Array<() => Promise<void>>,
  items: string,
  front = '',
): Promise<{ root: string; bare: string }> {
  const root = await backlogRepo(
    cleanups,
    `land: pr\nforge: { type: github, repo: acme/widgets }\ncheck: sh check.sh\nsandbox: off\nreview: false\n${/^pr:/m.test(front) ? '' : 'pr: { draft: false }\n'}${front}`,
    items,
    { 'check.sh': `${CHECK}\n` },
  );
  return { root, bare: await bareOrigin(root, cleanups) };
}

/** One task, verified and published as PR #1, its head green on the forge. */
export async function publishedTask(
  cleanups: Array<() => Promise<void>>,
  github: FakeGitHub,
  front = '',
): Promise<{ root: string; bare: string }> {
  const { root, bare } = await prRepo(cleanups, '- [ ] T-1 Fix the parser', front);
  await runFleet(root, fixIt, { env: githubEnv(github) });
  expect(github.pulls).toHaveLength(1);
  const head = await remoteHead(bare, 'loop/T-1');
  github.pushHead(1, head!);
  github.setCheck(head!, 'test', 'success');
  return { root, bare };
}

export interface Pass {
  h: Harness;
  logs: string[];
  landed: string | null;
  sent: string[];
  errors: string[];
}

/** A sync pass in a session of its own; what it logged. */
export async function syncPass(root: string, github: FakeGitHub): Promise<Pass> {
  const h = await openFleet(root, fixIt, { env: githubEnv(github) });
  const logs: string[] = [];
  h.fleet.events.on('log', (e: { message: string }) => logs.push(e.message));
  const result = await h.fleet.sync();
  await h.session.close();
  return {
    h,
    logs,
    landed: result.landed,
    sent: result.sentBack.map((s) => s.id),
    errors: result.errors.map((e) => `${e.id}: ${e.message}`),
  };
}

export async function stateOf(root: string): Promise<StateData> {
  return (await new LowdbStateStore((await findRepo(root)).statePath).load())!;
}

/** Tasks per status, and `lost`: verified tasks whose branch is gone (their verified work is nowhere to land from). */
export async function counts(root: string): Promise<Record<string, number>> {
  const state = await stateOf(root);
  const out: Record<string, number> = { verified: 0, merged: 0, queued: 0, lost: 0 };
  for (const t of Object.values(state.tasks)) {
    out[t.status] = (out[t.status] ?? 0) + 1;
    if (t.status === 'verified' && (await git(root, 'branch', '--list', `loop/${t.id}`)) === '') out.lost! += 1;
  }
  return out;
}
