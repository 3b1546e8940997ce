import { FakeHttp, type RecordedRequest, type Reply, Upcoming } from './fake-forge-http.js';

/**
 * An in-memory Linear GraphQL API on 127.0.0.1 (`POST /graphql`), written from Linear's public API
 * reference: a personal API key in `Authorization` as it is (no `Bearer`); `teams`, `viewer`, `issues`
 * (filter by team key, label name, state type `nin`, `updatedAt: { gt }`; `first`/`after` with
 * `pageInfo`), `issue(id)` by id or identifier with its `history`, `inverseRelations` and `comments`,
 * `issueLabels`; the mutations `commentCreate`, `commentUpdate` (one's own comments only), `issueUpdate`
 * (`stateId`, `labelIds`, written into the issue's history) and `issueLabelCreate`. Errors come as
 * `{errors: [{message, extensions: {code}}]}`; every answer carries `X-RateLimit-Requests-*` headers.
 *
 * No GraphQL parser is among the dependencies, so the fake does not parse documents: it reads the
 * operation's root field (and, for `issue`, which connection the document names) and its variables, and
 * answers with every field of those objects — a client reads the ones it asked for.
 */

export interface LinearUser {
  id: string;
  name: string;
}

export interface LinearIssue {
  id: string;
  number: number;
  identifier: string;
  title: string;
  description: string;
  creatorId: string;
  labelIds: string[];
  stateId: string;
  createdAt: string;
  updatedAt: string;
  history: Array<{ createdAt: string; actorId: string; added: string[]; removed: string[]; toState?: string }>;
  comments: Array<{ id: string; body: string; userId: string }>;
}

type Failure = { kind: 'ratelimit'; status: 400 | 429; resetInMs: number } | { kind: 'down'; status: number };

const STATES = [
  { id: 'st-backlog', name: 'Backlog', type: 'backlog' },
  { id: 'st-todo', name: 'Todo', type: 'unstarted' },
  { id: 'st-progress', name: 'In Progress', type: 'started' },
  { id: 'st-review', name: 'In Review', type: 'started' },
  { id: 'st-done', name: 'Done', type: 'completed' },
  { id: 'st-canceled', name: 'Canceled', type: 'canceled' },
];

export class FakeLinear {
  readonly key = 'lin_api_fake_key_0001';
  readonly http = new FakeHttp();
  readonly team = { id: 'team-1', key: 'ENG', name: 'Engineering', members: new Set<string>(), states: STATES };
  readonly users = new Map<string, LinearUser>();
  readonly labels: Array<{ id: string; name: string; teamId: string | null }> = [];
  readonly issues: LinearIssue[] = [];
  /** `issueId` blocks `relatedIssueId` (Linear's relation type "blocks") */
  readonly relations: Array<{ type: 'blocks'; issueId: string; relatedIssueId: string }> = [];
  url = '';
  #clock = Date.parse('2026-01-05T09:00:00.000Z');
  #seq = 0;
  readonly #failures = new Upcoming<Failure>();
  readonly #viewer: LinearUser;

  constructor() {
    this.#viewer = this.addUser('loopfleet-bot', true);
    this.http.before((req) => this.#refuse(req));
    this.http.after((_req, reply) => {
      reply.headers = {
        'x-ratelimit-requests-limit': '1500',
        'x-ratelimit-requests-remaining': '1499',
        'x-ratelimit-requests-reset': String(Date.now() + 3_600_000),
        ...reply.headers,
      };
    });
    this.http.route('POST', '/graphql', (req) => this.#graphql(req));
  }

  async start(): Promise<this> {
    this.url = `http://127.0.0.1:${await this.http.start()}/graphql`;
    return this;
  }

  close(): Promise<void> {
    return this.http.close();
  }

  #id(prefix: string): string {
    this.#seq += 1;
    return `${prefix}-${String(this.#seq).padStart(4, '0')}`;
  }

  #now(): string {
    this.#clock += 1000;
    return new Date(this.#clock).toISOString();
  }

  addUser(name: string, member: boolean): LinearUser {
    const user = { id: this.#id('user'), name };
    this.users.set(user.id, user);
    if (member) this.team.members.add(user.id);
    return user;
  }

  label(name: string, teamId: string | null = this.team.id): string {
    const found = this.labels.find((l) => l.name === name && (l.teamId === null || l.teamId === teamId));
    if (found !== undefined) return found.id;
    const id = this.#id('label');
    this.labels.push({ id, name, teamId });
    return id;
  }

  /** An issue `creator` opened, with `labels`; `labelledBy` put the first of them on it afterwards. */
  addIssue(
    title: string,
    description: string,
    creator: LinearUser,
    labels: string[],
    options: { labelledBy?: LinearUser; state?: string } = {},
  ): LinearIssue {
    const number = this.issues.length + 1;
    const at = this.#now();
    const labelIds = labels.map((l) => this.label(l));
    const issue: LinearIssue = {
      id: this.#id('issue'),
      number,
      identifier: `${this.team.key}-${number}`,
      title,
      description,
      creatorId: creator.id,
      labelIds: options.labelledBy === undefined ? labelIds : [],
      stateId: STATES.find((s) => s.name === (options.state ?? 'Todo'))!.id,
      createdAt: at,
      updatedAt: at,
      history: [],
      comments: [],
    };
    this.issues.push(issue);
    if (options.labelledBy !== undefined) this.#update(issue, options.labelledBy, { labelIds });
    return issue;
  }

  issue(identifier: string): LinearIssue {
    const found = this.issues.find((i) => i.identifier === identifier);
    if (found === undefined) throw new Error(`no issue ${identifier}`);
    return found;
  }

  block(blocker: string, blocked: string): void {
    this.relations.push({ type: 'blocks', issueId: this.issue(blocker).id, relatedIssueId: this.issue(blocked).id });
  }

  labelsOf(identifier: string): string[] {
    return this.issue(identifier).labelIds.map((id) => this.labels.find((l) => l.id === id)!.name);
  }

  stateOf(identifier: string): string {
    return STATES.find((s) => s.id === this.issue(identifier).stateId)!.name;
  }

  /** The next `count` requests are refused: rate limited (reset `resetInMs` away), or the server is down. */
  failNext(count: number, failure: Failure): void {
    this.#failures.push(count, failure);
  }

  /** How many requests carried each operation's root field (`commentCreate`, `issues`, …). */
  calls(field: string): number {
    return this.http.requests.filter((r) => rootField(r) === field).length;
  }

  #refuse(req: RecordedRequest): Reply | null {
    const failure = this.#failures.take();
    if (failure?.kind === 'down') return { status: failure.status, text: 'upstream connect error' };
    if (failure?.kind === 'ratelimit')
      return {
        status: failure.status,
        body: { errors: [{ message: 'Rate limit exceeded', extensions: { code: 'RATELIMITED' } }] },
        headers: {
          'x-ratelimit-requests-remaining': '0',
          'x-ratelimit-requests-reset': String(Date.now() + failure.resetInMs),
        },
      };
    // A personal API key is sent as it is; "Bearer <key>" is how OAuth tokens go, and is refused for a key.
    if (req.headers.authorization !== this.key)
      return error(400, 'Authentication required, not authenticated', 'AUTHENTICATION_ERROR');
    return null;
  }

  #graphql(req: RecordedRequest): Reply {
    const field = rootField(req);
    const vars = ((req.body as { variables?: Record<string, unknown> } | null)?.variables ?? {}) as Record<string, any>;
    const query = String((req.body as { query?: unknown } | null)?.query ?? '');
    const ok = (data: unknown): Reply => ({ status: 200, body: { data } });
    switch (field) {
      case 'viewer':
        return ok({ viewer: this.#viewer });
      case 'teams':
        return ok({ teams: { nodes: this.#teamsMatching(vars.key) } });
      case 'issues':
        return ok({ issues: this.#page(this.#filtered(vars.filter ?? {}), vars.first, vars.after) });
      case 'issue': {
        const issue = this.#find(String(vars.id ?? ''));
        if (issue === undefined) return error(200, 'Entity not found: Issue', 'INVALID_INPUT');
        if (/\bcomments\s*\(/.test(query)) {
          const comments = issue.comments.map((c) => ({ id: c.id, body: c.body, user: { id: c.userId } }));
          return ok({ issue: { comments: this.#page(comments, 100, vars.after) } });
        }
        return ok({ issue: this.#issueJson(issue) });
      }
      case 'issueLabels':
        return ok({
          issueLabels: {
            nodes: this.labels
              .filter((l) => l.name === vars.name)
              .map((l) => ({ id: l.id, name: l.name, team: l.teamId === null ? null : { key: this.team.key } })),
          },
        });
      case 'commentCreate': {
        const issue = this.issues.find((i) => i.id === vars.input?.issueId);
        if (issue === undefined) return error(200, 'Entity not found: Issue', 'INVALID_INPUT');
        const comment = { id: this.#id('comment'), body: String(vars.input.body), userId: this.#viewer.id };
        issue.comments.push(comment);
        issue.updatedAt = this.#now();
        return ok({ commentCreate: { success: true, comment: { id: comment.id } } });
      }
      case 'commentUpdate': {
        const comment = this.issues.flatMap((i) => i.comments).find((c) => c.id === vars.id);
        if (comment === undefined) return error(200, 'Entity not found: Comment', 'INVALID_INPUT');
        if (comment.userId !== this.#viewer.id) return error(200, 'You can only edit your own comments', 'FORBIDDEN');
        comment.body = String(vars.input?.body ?? '');
        return ok({ commentUpdate: { success: true } });
      }
      case 'issueUpdate': {
        // Mutations take Linear's id (the reference names it `id: String!`, the issue's identifier).
        const issue = this.issues.find((i) => i.id === vars.id);
        if (issue === undefined) return error(200, 'Entity not found: Issue', 'INVALID_INPUT');
        const input = vars.input ?? {};
        if (input.stateId !== undefined && !STATES.some((s) => s.id === input.stateId))
          return error(200, 'Entity not found: WorkflowState', 'INVALID_INPUT');
        this.#update(issue, this.#viewer, input);
        return ok({ issueUpdate: { success: true } });
      }
      case 'issueLabelCreate': {
        const id = this.label(String(vars.input?.name), String(vars.input?.teamId ?? this.team.id));
        return ok({ issueLabelCreate: { success: true, issueLabel: { id } } });
      }
      default:
        return error(400, `Cannot query field "${field}" on type "Query".`, 'GRAPHQL_VALIDATION_FAILED');
    }
  }

  #update(issue: LinearIssue, actor: LinearUser, input: { stateId?: string; labelIds?: string[] }): void {
    const name = (id: string) => this.labels.find((l) => l.id === id)?.name ?? id;
    const entry: LinearIssue['history'][number] = { createdAt: this.#now(), actorId: actor.id, added: [], removed: [] };
    if (input.labelIds !== undefined) {
      entry.added = input.labelIds.filter((l) => !issue.labelIds.includes(l)).map(name);
      entry.removed = issue.labelIds.filter((l) => !input.labelIds!.includes(l)).map(name);
      issue.labelIds = [...input.labelIds];
    }
    if (input.stateId !== undefined) {
      entry.toState = input.stateId;
      issue.stateId = input.stateId;
    }
    issue.history.push(entry);
    issue.updatedAt = entry.createdAt;
  }

  #teamsMatching(key: unknown): unknown[] {
    if (key !== this.team.key) return [];
    return [
      {
        id: this.team.id,
        key: this.team.key,
        name: this.team.name,
        members: { nodes: [...this.team.members].map((id) => ({ id })) },
        states: { nodes: STATES },
      },
    ];
  }

  #find(id: string): LinearIssue | undefined {
    return this.issues.find((i) => i.id === id || i.identifier === id);
  }

  /** `filter` is an IssueFilter as the client sent it (JSON). */
  #filtered(filter: any): unknown[] {
    const stateType = (i: LinearIssue) => STATES.find((s) => s.id === i.stateId)!.type;
    return [...this.issues]
      .filter((i) => filter.team?.key?.eq === undefined || filter.team.key.eq === this.team.key)
      .filter(
        (i) => filter.labels?.name?.eq === undefined || this.labelsOf(i.identifier).includes(filter.labels.name.eq),
      )
      .filter((i) => filter.state?.type?.nin === undefined || !filter.state.type.nin.includes(stateType(i)))
      .filter((i) => filter.updatedAt?.gt === undefined || i.updatedAt > filter.updatedAt.gt)
      .sort((a, b) => b.createdAt.localeCompare(a.createdAt))
      .map((i) => this.#issueJson(i));
  }

  #page<T>(items: T[], first: unknown, after: unknown): { nodes: T[]; pageInfo: object } {
    const size = Math.min(250, Math.max(1, Number(first ?? 50)));
    const start = typeof after === 'string' && after !== '' ? Number(Buffer.from(after, 'base64url').toString()) : 0;
    const nodes = items.slice(start, start + size);
    const end = start + nodes.length;
    return {
      nodes,
      pageInfo: { hasNextPage: end < items.length, endCursor: Buffer.from(String(end)).toString('base64url') },
    };
  }

  #issueJson(i: LinearIssue): unknown {
    const byId = (id: string) => this.issues.find((x) => x.id === id)!;
    const state = STATES.find((s) => s.id === i.stateId)!;
    const brief = (x: LinearIssue) => ({
      identifier: x.identifier,
      state: { type: STATES.find((s) => s.id === x.stateId)!.type },
    });
    return {
      id: i.id,
      identifier: i.identifier,
      number: i.number,
      title: i.title,
      description: i.description,
      url: `https://linear.example/acme/issue/${i.identifier}/slug`,
      createdAt: i.createdAt,
      updatedAt: i.updatedAt,
      creator: { id: i.creatorId },
      state,
      labels: { nodes: i.labelIds.map((id) => ({ id, name: this.labels.find((l) => l.id === id)!.name })) },
      history: {
        nodes: i.history.map((h) => ({
          createdAt: h.createdAt,
          actor: { id: h.actorId },
          addedLabels: h.added.map((name) => ({ name })),
          removedLabels: h.removed.map((name) => ({ name })),
        })),
      },
      relations: {
        nodes: this.relations
          .filter((r) => r.issueId === i.id)
          .map((r) => ({ type: r.type, issue: brief(i), relatedIssue: brief(byId(r.relatedIssueId)) })),
      },
      inverseRelations: {
        nodes: this.relations
          .filter((r) => r.relatedIssueId === i.id)
          .map((r) => ({ type: r.type, issue: brief(byId(r.issueId)), relatedIssue: brief(i) })),
      },
    };
  }
}

function error(status: number, message: string, code: string): Reply {
  return { status, body: { errors: [{ message, extensions: { code, userPresentableMessage: message } }] } };
}

/** The first field of the operation's selection: `issues` in `query X($f: IssueFilter) { issues(…) {…} }`. */
function rootField(req: RecordedRequest): string {
  const query = String((req.body as { query?: unknown } | null)?.query ?? '');
  return /^\s*(?:(?:query|mutation)\b[^{(]*(?:\([^)]*\))?\s*)?\{\s*(\w+)/.exec(query)?.[1] ?? '';
}
