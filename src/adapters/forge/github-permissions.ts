import { ForgeError } from '../../ports/forge.js';
import type { GitHubCaller } from './github-ci.js';

/**
 * Who may steer loopfleet on GitHub: a person whose role on the repository is write, maintain or admin, as
 * GitHub answers `GET /repos/{owner}/{repo}/collaborators/{username}/permission`, or a name on `pr.allow`.
 *
 * Invariants: `author_association` is never read for this (an organisation member with read access is
 * `MEMBER` there); each person is asked about once per {@link PERMISSION_TTL_MS} per run, so a thousand
 * comments by one person cost one request; a person GitHub does not know (404) may not write.
 */

/** The roles that may push to a repository (`role_name`; the legacy `permission` says `write` or `admin` for them). */
const WRITE_ROLES = new Set(['admin', 'maintain', 'write']);
/** How long an answer is kept: a `--watch` that runs for days sees a changed role within the hour. */
export const PERMISSION_TTL_MS = 60 * 60_000;
/** GitHub's user names: letters, digits and single hyphens. */
const LOGIN = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/;

export interface Permission {
  canWrite: boolean;
  /** the role GitHub named (`admin`, `maintain`, `write`, `triage`, `read`, `none`), or `allow-list` */
  permission: string;
}

export class GitHubPermissions {
  readonly #call: GitHubCaller;
  readonly #allow: ReadonlySet<string>;
  readonly #cache = new Map<string, { at: number; answer: Promise<Permission> }>();

  constructor(call: GitHubCaller, allow: readonly string[] = []) {
    this.#call = call;
    this.#allow = new Set(allow.map((a) => a.toLowerCase()));
  }

  of(login: string): Promise<Permission> {
    const key = login.toLowerCase();
    if (this.#allow.has(key)) return Promise.resolve({ canWrite: true, permission: 'allow-list' });
    if (!LOGIN.test(login)) return Promise.resolve({ canWrite: false, permission: 'none' });
    const kept = this.#cache.get(key);
    if (kept !== undefined && Date.now() - kept.at < PERMISSION_TTL_MS) return kept.answer;
    const answer = this.#ask(login);
    this.#cache.set(key, { at: Date.now(), answer });
    // A failed question is asked again next time, not remembered as an answer.
    answer.catch(() => this.#cache.delete(key));
    return answer;
  }

  async #ask(login: string): Promise<Permission> {
    try {
      const { data } = await this.#call(`reading the permission of ${login}`, (o, where) =>
        o.rest.repos.getCollaboratorPermissionLevel({ ...where, username: login }),
      );
      const role = (data as { role_name?: string }).role_name ?? data.permission;
      return { canWrite: WRITE_ROLES.has(role) || WRITE_ROLES.has(data.permission), permission: role };
    } catch (error) {
      if (error instanceof ForgeError && error.status === 404) return { canWrite: false, permission: 'none' };
      throw error;
    }
  }
}
