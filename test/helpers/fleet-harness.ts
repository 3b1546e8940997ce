import { findRepo } from '../../src/commands/repo.js';
import { openSession, type Overrides, type Session } from '../../src/commands/session.js';
import type { Fleet, FleetServices } from '../../src/core/fleet/fleet.js';
import { FakeModel, type FakeScript } from './fake-model.js';
import { makeRepo } from './git-repo.js';

export interface Harness {
  fleet: Fleet;
  model: FakeModel;
  session: Session;
}

/** Opens a real session (real git, processes, state file, lock) on `root` with a scripted model. */
export async function openFleet(
  root: string,
  script: FakeScript,
  options: {
    autoMerge?: boolean;
    overrides?: Overrides;
    watch?: boolean;
    services?: (s: FleetServices) => FleetServices;
    env?: NodeJS.ProcessEnv;
  } = {},
): Promise<Harness> {
  const repo = await findRepo(root);
  const model = new FakeModel(script);
  const session = await openSession(repo, {
    overrides: options.overrides ?? {},
    autoMerge: options.autoMerge ?? false,
    watch: options.watch ?? false,
    env: { ...process.env, ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9', ...options.env },
    services: (s) => ({ ...(options.services?.(s) ?? s), model, cliModel: model }),
  });
  return { fleet: session.fleet, model, session };
}

/** Runs the backlog to idle and closes the session (releasing the lock). */
export async function runFleet(
  root: string,
  script: FakeScript,
  options: Parameters<typeof openFleet>[2] = {},
): Promise<Harness> {
  const h = await openFleet(root, script, options);
  h.fleet.start();
  await h.fleet.whenIdle();
  await h.session.close();
  return h;
}

/** A session for merge/discard/retry after a run, like `loopfleet merge` opens one. */
export async function reopen(root: string, script: FakeScript = () => ({})): Promise<Harness> {
  return openFleet(root, script);
}

export function backlog(front: string, items: string): string {
  return `---\n${front.trim()}\n---\n\n# Backlog\n\n${items.trim()}\n`;
}

/** A real repository whose BACKLOG.md has `front` and `items`, plus `files`; its removal goes on `cleanups`. */
export async function backlogRepo(
  cleanups: Array<() => Promise<void>>,
  front: string,
  items: string,
  files: Record<string, string> = {},
): Promise<string> {
  const r = await makeRepo({ 'BACKLOG.md': backlog(front, items), ...files });
  cleanups.push(r.cleanup);
  return r.root;
}
