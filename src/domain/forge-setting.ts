/**
 * The `forge:` setting of the front matter: which forge the remote is on. `auto` decides from the remote's
 * URL; `{ type, repo }` names the repository when the URL does not (a mirror, a local path).
 */
export type ForgeSetting = 'auto' | 'github' | 'gitlab' | 'none' | { type: 'github' | 'gitlab'; repo: string };

export const FORGE_SETTING_WORDS = ['auto', 'github', 'gitlab', 'none'] as const;

/** The setting a parsed YAML value stands for, or the problem with it (for an InputError at its line). */
export function readForgeSetting(value: unknown): { setting: ForgeSetting } | { problem: string } {
  if (value === undefined || value === null) return { setting: 'auto' };
  if (typeof value === 'string') {
    const word = FORGE_SETTING_WORDS.find((w) => w === value.trim().toLowerCase());
    return word === undefined ? { problem: `forge must be auto, github, gitlab, none or { type: github, repo: owner/name }, not ${JSON.stringify(value)}` } : { setting: word };
  }
  if (typeof value === 'object' && !Array.isArray(value)) {
    const { type, repo, ...rest } = value as Record<string, unknown>;
    const extra = Object.keys(rest);
    if (extra.length > 0) return { problem: `forge takes only type and repo, not ${extra.join(', ')}` };
    if (type !== 'github' && type !== 'gitlab') return { problem: `forge.type must be github or gitlab, not ${JSON.stringify(type)}` };
    if (typeof repo !== 'string' || !/^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)+$/.test(repo.trim())) {
      return { problem: `forge.repo must be ${type === 'github' ? 'owner/name' : 'group/…/project'}, not ${JSON.stringify(repo)}` };
    }
    if (type === 'github' && repo.trim().split('/').length !== 2) return { problem: `forge.repo must be owner/name on GitHub, not ${JSON.stringify(repo)}` };
    return { setting: { type, repo: repo.trim() } };
  }
  return { problem: `forge must be auto, github, gitlab, none or { type: github, repo: owner/name }, not ${JSON.stringify(value)}` };
}
