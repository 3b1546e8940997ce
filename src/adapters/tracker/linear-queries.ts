/**
 * The GraphQL documents {@link LinearTracker} sends, each a named operation (Linear's API reference:
 * https://developers.linear.app/docs/graphql/working-with-the-graphql-api). Every list is asked for with
 * `first` and read at most a bounded number of pages.
 */

const ISSUE_FIELDS = `id identifier number title description url createdAt updatedAt
  creator { id } state { id type } labels(first: 50) { nodes { id name } }`;

export const TEAM = `query LoopfleetTeam($key: String!) {
  teams(filter: { key: { eq: $key } }) {
    nodes { id key name members(first: 250) { nodes { id } } states(first: 100) { nodes { id name type } } }
  }
}`;

export const VIEWER = `query LoopfleetViewer { viewer { id name } }`;

export const ISSUES = `query LoopfleetIssues($filter: IssueFilter, $first: Int, $after: String) {
  issues(filter: $filter, first: $first, after: $after, orderBy: createdAt) {
    nodes { ${ISSUE_FIELDS} }
    pageInfo { hasNextPage endCursor }
  }
}`;

export const ISSUE = `query LoopfleetIssue($id: String!) { issue(id: $id) { ${ISSUE_FIELDS} } }`;

export const HISTORY = `query LoopfleetIssueHistory($id: String!) {
  issue(id: $id) {
    history(first: 100) { nodes { createdAt actor { id } addedLabels { name } removedLabels { name } } }
  }
}`;

export const RELATIONS = `query LoopfleetIssueRelations($id: String!) {
  issue(id: $id) {
    inverseRelations(first: 50) { nodes { type issue { identifier state { type } } } }
  }
}`;

export const COMMENTS = `query LoopfleetIssueComments($id: String!, $after: String) {
  issue(id: $id) {
    comments(first: 100, after: $after) { nodes { id body user { id } } pageInfo { hasNextPage endCursor } }
  }
}`;

export const LABELS = `query LoopfleetLabels($name: String!) {
  issueLabels(filter: { name: { eq: $name } }, first: 50) { nodes { id name team { key } } }
}`;

export const COMMENT_CREATE = `mutation LoopfleetCommentCreate($input: CommentCreateInput!) {
  commentCreate(input: $input) { success comment { id } }
}`;

export const COMMENT_UPDATE = `mutation LoopfleetCommentUpdate($id: String!, $input: CommentUpdateInput!) {
  commentUpdate(id: $id, input: $input) { success }
}`;

export const ISSUE_UPDATE = `mutation LoopfleetIssueUpdate($id: String!, $input: IssueUpdateInput!) {
  issueUpdate(id: $id, input: $input) { success }
}`;

export const LABEL_CREATE = `mutation LoopfleetIssueLabelCreate($input: IssueLabelCreateInput!) {
  issueLabelCreate(input: $input) { success issueLabel { id } }
}`;

export interface RawIssue {
  id: string;
  identifier: string;
  number: number;
  title: string;
  description?: string | null;
  url: string;
  createdAt: string;
  updatedAt: string;
  creator?: { id?: string } | null;
  state?: { id?: string; type?: string } | null;
  labels?: { nodes?: Array<{ id: string; name: string }> };
}

export interface RawTeam {
  id: string;
  key: string;
  name: string;
  members: { nodes: Array<{ id: string }> };
  states: { nodes: Array<{ id: string; name: string; type: string }> };
}

export interface Page<T> {
  nodes: T[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

/** Workflow state types of an issue that is no longer open. */
export const CLOSED_TYPES = ['completed', 'canceled'];
