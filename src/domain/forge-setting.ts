/**
 * The `forge:` setting of the front matter: which forge the remote is on. `auto` decides from the remote's
 * URL; `{ type, repo }` names the repository when the URL does not (a mirror, a local path). The same shape
 * as FleetConfig's `forge`, which the front matter's reader fills.
 */
export type ForgeSetting = 'auto' | 'github' | 'gitlab' | 'none' | { type: 'github' | 'gitlab'; repo: string };
