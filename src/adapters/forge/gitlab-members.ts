import type { GitLabClient } from './gitlab-client.js';

/**
 * Whose words count on GitLab: a project member at Developer (level 30) or higher, as
 * `GET /projects/:id/members/all/:user_id` answers (inherited memberships included), or a name on `pr.allow`.
 * Invariant: each person is asked about once per run (a flood of notes by one person costs one request); a
 * failed question is asked again, not remembered as an answer.
 */

const DEVELOPER = 30;
const LEVELS: Record<number, string> = {
  10: 'Guest',
  15: 'Planner',
  20: 'Reporter',
  30: 'Developer',
  40: 'Maintainer',
  50: 'Owner',
};

export interface Member {
  canWrite: boolean;
  /** the access level's name (`Developer`, `Reporter`, …), `none`, or `allow-list` */
  permission: string;
}

export class GitLabMembers {
  readonly #client: GitLabClient;
  readonly #project: string;
  readonly #allow: ReadonlySet<string>;
  readonly #asked = new Map<number, Promise<Member>>();

  constructor(client: GitLabClient, project: string, allow: readonly string[] = []) {
    this.#client = client;
    this.#project = project;
    this.#allow = new Set(allow.map((a) => a.toLowerCase()));
  }

  of(userId: number, username: string): Promise<Member> {
    if (this.#allow.has(username.toLowerCase())) return Promise.resolve({ canWrite: true, permission: 'allow-list' });
    let answer = this.#asked.get(userId);
    if (answer === undefined) {
      answer = this.#ask(userId);
      this.#asked.set(userId, answer);
      answer.catch(() => this.#asked.delete(userId));
    }
    return answer;
  }

  async #ask(userId: number): Promise<Member> {
    const { status, data } = await this.#client.request<{ access_level?: number }>(
      `reading the membership of user ${userId}`,
      'GET',
      `${this.#project}/members/all/${userId}`,
      { accept: [404] },
    );
    const level = status === 200 ? (data.access_level ?? 0) : 0;
    return { canWrite: level >= DEVELOPER, permission: LEVELS[level] ?? (level === 0 ? 'none' : String(level)) };
  }
}
