import { ForgeError } from '../../ports/forge.js';
import type { TrackerState } from '../../domain/tracker-setting.js';
import type { IssueList, StatusComment, TrackerIssue, TrackerPermission, TrackerPort } from '../../ports/tracker.js';
import { LinearClient, type LinearClientOptions } from './linear-client.js';
import * as Q from './linear-queries.js';

/**
 * TrackerPort on Linear's GraphQL API ({@link LinearClient}): the open issues of one team carrying the
 * label. An issue's number is its number within the team (`ENG-12` → 12); queries name it by its
 * identifier, mutations by Linear's id.
 *
 * Invariants:
 * - the first read lists the open issues (state type neither completed nor canceled) with the label, at
 *   most `maxPages` pages; once a read was complete, each later read asks only for the team's issues
 *   updated since the newest it saw (`updatedAt: { gt }`), and an issue that lost the label or was closed
 *   leaves the list — an unchanged team costs one request and reports `changed: false`;
 * - who may ask is who belongs to the team (its members, read once an hour); who labelled an issue comes
 *   from its history (`addedLabels`, the actor);
 * - an issue is moved only to a workflow state the setting names ({@link LinearTracker.moveTo}); a name the
 *   team lacks is found by {@link LinearTracker.problems} before the fleet starts;
 * - the status comment is found again among the viewer's own comments by its marker.
 */

const MEMBERS_FOR_MS = 60 * 60 * 1000;
const COMMENT_PAGES = 3;

export interface LinearSetting {
  team: string;
  states?: Partial<Record<TrackerState, string>>;
}

export class LinearTracker implements TrackerPort {
  readonly type = 'linear' as const;
  /** the team's key: what the tracker reads */
  readonly repo: string;
  readonly #setting: LinearSetting;
  readonly #client: LinearClient;
  #team: { at: number; team: Promise<Q.RawTeam> } | null = null;
  #viewer: Promise<{ id: string; name: string }> | null = null;
  /** the open labelled issues by number, and the newest `updatedAt` among those read, once a read was complete */
  #list: { label: string; issues: Map<number, TrackerIssue>; since: string | null } | null = null;
  readonly #ids = new Map<number, string>();
  /** each issue's workflow state as last read or set: a move to where it already is is not sent */
  readonly #stateIds = new Map<number, string>();
  readonly #labelIds = new Map<string, string>();

  constructor(setting: LinearSetting, options: LinearClientOptions) {
    this.repo = setting.team;
    this.#setting = setting;
    this.#client = new LinearClient(options);
  }

  #ask<T>(what: string, query: string, variables: Record<string, unknown> = {}, creates = false): Promise<T> {
    return this.#client.request<T>(what, query, variables, creates);
  }

  #key(number: number): string {
    return `${this.#setting.team}-${number}`;
  }

  /** The team, its members and its workflow states (read again after an hour, for who joined or left). */
  team(): Promise<Q.RawTeam> {
    if (this.#team === null || Date.now() - this.#team.at > MEMBERS_FOR_MS) {
      const team = this.#ask<{ teams: { nodes: Q.RawTeam[] } }>(`reading the team ${this.#setting.team}`, Q.TEAM, {
        key: this.#setting.team,
      }).then(({ teams }) => {
        const found = teams.nodes.find((t) => t.key === this.#setting.team);
        if (found === undefined) throw new ForgeError(`Linear has no team with the key ${this.#setting.team}`, 404);
        return found;
      });
      this.#team = { at: Date.now(), team };
      // The caller still gets the failure; this only forgets it, so the next call asks again.
      team.catch(() => (this.#team = null));
    }
    return this.#team.team;
  }

  /** What is wrong with the setting as Linear answers it: the team missing, a state name the team lacks. */
  async problems(): Promise<string[]> {
    let team: Q.RawTeam;
    try {
      team = await this.team();
    } catch (error) {
      if (error instanceof ForgeError && error.status === 404) return [error.message];
      throw error;
    }
    const names = team.states.nodes.map((s) => s.name);
    return Object.entries(this.#setting.states ?? {})
      .filter(([, name]) => !names.includes(name))
      .map(
        ([state, name]) =>
          `tracker.states.${state}: the team ${team.key} has no workflow state named '${name}' (it has ${names.map((n) => `'${n}'`).join(', ')})`,
      );
  }

  async issues(label: string, maxPages: number): Promise<IssueList> {
    const kept = this.#list?.label === label ? this.#list : null;
    const since = kept?.since ?? null;
    const team = { key: { eq: this.#setting.team } };
    // A later read takes every issue of the team changed since: one that lost the label or closed leaves.
    const filter =
      since === null
        ? { team, labels: { name: { eq: label } }, state: { type: { nin: Q.CLOSED_TYPES } } }
        : { team, updatedAt: { gt: since } };
    const read: Q.RawIssue[] = [];
    let after: string | null = null;
    let truncated = false;
    for (let page = 1; ; page++) {
      const { issues }: { issues: Q.Page<Q.RawIssue> } = await this.#ask(
        `listing the issues of ${team.key.eq}`,
        Q.ISSUES,
        {
          filter,
          first: 100,
          after,
        },
      );
      read.push(...issues.nodes);
      if (!issues.pageInfo.hasNextPage) break;
      if (page >= maxPages) {
        truncated = true;
        break;
      }
      after = issues.pageInfo.endCursor;
    }
    const held = new Map(since === null ? [] : kept!.issues);
    let newest = since;
    for (const raw of read) {
      if (newest === null || raw.updatedAt > newest) newest = raw.updatedAt;
      const number = numberOf(raw.identifier, this.#setting.team);
      if (number === null) continue;
      this.#ids.set(number, raw.id);
      if (raw.state?.id !== undefined) this.#stateIds.set(number, raw.state.id);
      const open = !Q.CLOSED_TYPES.includes(raw.state?.type ?? '');
      const issue = issueOf(raw, number);
      if (open && issue.labels.includes(label)) held.set(number, issue);
      else held.delete(number);
    }
    // Only a complete read may be the base of the next one: a truncated list is read whole again.
    this.#list = { label, issues: held, since: truncated ? null : newest };
    const issues = listOf(held);
    // Changed: an issue of the list came, went or was edited (other issues of the team may have changed).
    const changed = since === null || JSON.stringify(issues) !== JSON.stringify(listOf(kept!.issues));
    return { issues, changed, truncated };
  }

  async labelledBy(number: number, label: string): Promise<string | null> {
    type Entry = {
      createdAt: string;
      actor?: { id?: string } | null;
      addedLabels?: Array<{ name: string }> | null;
      removedLabels?: Array<{ name: string }> | null;
    };
    const { issue } = await this.#ask<{ issue: { history: { nodes: Entry[] } } }>(
      `reading the history of ${this.#key(number)}`,
      Q.HISTORY,
      { id: this.#key(number) },
    );
    const newestFirst = [...issue.history.nodes].sort((a, b) => b.createdAt.localeCompare(a.createdAt));
    for (const entry of newestFirst) {
      if (entry.removedLabels?.some((l) => l.name === label) === true) return null;
      if (entry.addedLabels?.some((l) => l.name === label) === true) return entry.actor?.id ?? null;
    }
    return null;
  }

  async permission(user: string): Promise<TrackerPermission> {
    const team = await this.team();
    const member = team.members.nodes.some((m) => m.id === user);
    return { canWrite: member, permission: member ? `member of ${team.key}` : `not a member of ${team.key}` };
  }

  async blockers(number: number): Promise<number[]> {
    type Relation = { type: string; issue?: { identifier?: string; state?: { type?: string } | null } | null };
    const { issue } = await this.#ask<{ issue: { inverseRelations: { nodes: Relation[] } } }>(
      `reading the relations of ${this.#key(number)}`,
      Q.RELATIONS,
      { id: this.#key(number) },
    );
    const out = new Set<number>();
    // An inverse relation of type "blocks" is another issue that blocks this one ("blocked by" in Linear's view).
    for (const r of issue.inverseRelations.nodes) {
      if (r.type !== 'blocks' || Q.CLOSED_TYPES.includes(r.issue?.state?.type ?? '')) continue;
      const n = numberOf(r.issue?.identifier ?? '', this.#setting.team);
      if (n !== null) out.add(n);
    }
    return [...out].sort((a, b) => a - b);
  }

  async relabel(number: number, add: readonly string[], remove: readonly string[]): Promise<void> {
    const current = await this.#issue(number);
    const ids = new Set((current.labels?.nodes ?? []).map((l) => l.id));
    for (const name of add) ids.add(await this.#labelId(name));
    for (const name of remove) {
      const there = current.labels?.nodes?.find((l) => l.name === name);
      if (there !== undefined) ids.delete(there.id);
    }
    await this.#ask(`labelling ${this.#key(number)}`, Q.ISSUE_UPDATE, {
      id: current.id,
      input: { labelIds: [...ids] },
    });
  }

  async moveTo(number: number, state: TrackerState): Promise<void> {
    const name = this.#setting.states?.[state];
    if (name === undefined) return;
    const found = (await this.team()).states.nodes.find((s) => s.name === name);
    if (found === undefined)
      throw new ForgeError(`Linear team ${this.#setting.team} has no workflow state ${name}`, 404);
    if (this.#stateIds.get(number) === found.id) return;
    await this.#ask(`moving ${this.#key(number)} to ${name}`, Q.ISSUE_UPDATE, {
      id: await this.#id(number),
      input: { stateId: found.id },
    });
    this.#stateIds.set(number, found.id);
  }

  async findComment(number: number, marker: string): Promise<StatusComment | null> {
    type Comment = { id: string; body: string; user?: { id?: string } | null };
    const self = (await this.#self()).id;
    let after: string | null = null;
    for (let page = 1; page <= COMMENT_PAGES; page++) {
      const { issue }: { issue: { comments: Q.Page<Comment> } } = await this.#ask(
        `reading the comments of ${this.#key(number)}`,
        Q.COMMENTS,
        { id: this.#key(number), after },
      );
      // Only loopfleet's own comment: a marker anyone else wrote is text, not the status comment.
      const mine = issue.comments.nodes.find((c) => c.user?.id === self && c.body.startsWith(marker));
      if (mine !== undefined) return { id: mine.id, body: mine.body };
      if (!issue.comments.pageInfo.hasNextPage) break;
      after = issue.comments.pageInfo.endCursor;
    }
    return null;
  }

  async createComment(number: number, body: string): Promise<StatusComment> {
    const { commentCreate } = await this.#ask<{ commentCreate: { success: boolean; comment: { id: string } } }>(
      `commenting on ${this.#key(number)}`,
      Q.COMMENT_CREATE,
      { input: { issueId: await this.#id(number), body } },
      true,
    );
    return { id: commentCreate.comment.id, body };
  }

  async editComment(id: StatusComment['id'], body: string): Promise<void> {
    await this.#ask(`editing comment ${id}`, Q.COMMENT_UPDATE, { id: String(id), input: { body } });
  }

  async self(): Promise<string> {
    return (await this.#self()).id;
  }

  /** The key's user, with the name people know them by (doctor says it). */
  viewer(): Promise<{ id: string; name: string }> {
    return this.#self();
  }

  async hasLabel(label: string): Promise<boolean> {
    const { issueLabels } = await this.#ask<{
      issueLabels: { nodes: Array<{ id: string; team?: { key?: string } | null }> };
    }>(`reading the label ${label}`, Q.LABELS, { name: label });
    // A workspace label (no team) or one of this team: the team's issues can carry it.
    return issueLabels.nodes.some((l) => l.team == null || l.team.key === this.#setting.team);
  }

  #self(): Promise<{ id: string; name: string }> {
    this.#viewer ??= this.#ask<{ viewer: { id: string; name: string } }>('reading the key’s user', Q.VIEWER).then(
      (d) => d.viewer,
    );
    // The caller still gets the failure; this only forgets it, so the next call asks again.
    this.#viewer.catch(() => (this.#viewer = null));
    return this.#viewer;
  }

  async #issue(number: number): Promise<Q.RawIssue> {
    const { issue } = await this.#ask<{ issue: Q.RawIssue }>(`reading ${this.#key(number)}`, Q.ISSUE, {
      id: this.#key(number),
    });
    this.#ids.set(number, issue.id);
    if (issue.state?.id !== undefined) this.#stateIds.set(number, issue.state.id);
    return issue;
  }

  async #id(number: number): Promise<string> {
    return this.#ids.get(number) ?? (await this.#issue(number)).id;
  }

  /** The label's id (a workspace label or the team's), created on the team when there is none. */
  async #labelId(name: string): Promise<string> {
    const known = this.#labelIds.get(name);
    if (known !== undefined) return known;
    const { issueLabels } = await this.#ask<{
      issueLabels: { nodes: Array<{ id: string; team?: { key?: string } | null }> };
    }>(`reading the label ${name}`, Q.LABELS, { name });
    let id = issueLabels.nodes.find((l) => l.team == null || l.team.key === this.#setting.team)?.id;
    if (id === undefined) {
      const { issueLabelCreate } = await this.#ask<{ issueLabelCreate: { issueLabel: { id: string } } }>(
        `creating the label ${name}`,
        Q.LABEL_CREATE,
        { input: { name, teamId: (await this.team()).id } },
        true,
      );
      id = issueLabelCreate.issueLabel.id;
    }
    this.#labelIds.set(name, id);
    return id;
  }
}

/** The number of `identifier` within `team` (`ENG-12` → 12), or null for another team's issue. */
function numberOf(identifier: string, team: string): number | null {
  const m = /^([A-Z][A-Z0-9]*)-(\d+)$/.exec(identifier);
  return m !== null && m[1] === team ? Number(m[2]) : null;
}

function listOf(issues: Map<number, TrackerIssue>): TrackerIssue[] {
  return [...issues.values()].sort((a, b) => b.number - a.number);
}

function issueOf(raw: Q.RawIssue, number: number): TrackerIssue {
  return {
    number,
    title: raw.title,
    body: raw.description ?? '',
    url: raw.url,
    author: raw.creator?.id ?? '',
    labels: (raw.labels?.nodes ?? []).map((l) => l.name),
  };
}
