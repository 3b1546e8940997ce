import type { ForgePort } from '../../../ports/forge.js';
import type { RemoteAuth } from '../../../ports/git.js';
import type { FleetConfig, LandMode, TaskSpec } from '../../../domain/types.js';

/**
 * The repository on a forge that a fleet's pull requests go to: the forge client, the git remote its
 * branches are pushed to (a remote's name or URL), and the header that authenticates the push. The
 * header is handed only to loopfleet's own git (GitPort.push/fetch), never to anything sandboxed.
 */
export interface ForgeLink {
  forge: ForgePort;
  remote: string;
  auth?: RemoteAuth;
}

/** A task's `land:`, else the front matter's, else the local merge. */
export function landOf(spec: Pick<TaskSpec, 'land'> | undefined, config: Pick<FleetConfig, 'land'>): LandMode {
  return spec?.land ?? config.land ?? 'merge';
}

/** The ref the remote's copy of `base` is fetched into. */
export function remoteBaseRef(remote: string, base: string): string {
  const name = /^[A-Za-z0-9._-]+$/.test(remote) ? remote : 'loopfleet';
  return `refs/remotes/${name}/${base}`;
}

/** The ref that keeps a task's last commit when its pull request was merged some other way than as it is (a squash). */
export function mergedRef(id: string): string {
  return `refs/loopfleet/merged/${id}`;
}
