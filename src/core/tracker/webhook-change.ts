/**
 * What a verified webhook delivery ({@link verifyGithubWebhook}, {@link verifyGitlabWebhook}) means for the
 * fleet: an issue opened, edited, closed or (un)labelled, a comment, a pull request review, a check run or
 * pipeline that finished. Pure: it reads the payload's numbers, names and states, and never its text.
 *
 * Invariant: a payload that does not have the shape its event promises is `ignored` with the reason, never a
 * change with made-up fields; whoever acts on a change reads the tracker again with its own token.
 */
import type { Verified } from './webhook.js';

export type IssueAction = 'opened' | 'edited' | 'closed' | 'reopened' | 'labeled' | 'unlabeled';

export type TrackerChange =
  | { kind: 'issue'; forge: 'github' | 'gitlab'; action: IssueAction; issue: number; labels: string[]; sender: string }
  | { kind: 'comment'; forge: 'github' | 'gitlab'; number: number; onPull: boolean; author: string }
  | {
      kind: 'review';
      forge: 'github' | 'gitlab';
      pull: number;
      state: 'approved' | 'changes-requested' | 'commented' | 'unapproved';
      author: string;
    }
  | { kind: 'check'; forge: 'github' | 'gitlab'; sha: string; conclusion: string; pulls: number[] }
  | { kind: 'ignored'; reason: string };

type Json = Record<string, unknown>;

const obj = (v: unknown): Json | null =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : null;
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : null);
const at = (v: unknown, ...path: string[]): unknown => path.reduce<unknown>((o, k) => obj(o)?.[k], v);

/** The tracker change a verified delivery means. */
export function webhookChange(verified: Extract<Verified, { ok: true }>): TrackerChange {
  return verified.forge === 'github'
    ? githubChange(verified.event, verified.payload)
    : gitlabChange(verified.event, verified.payload);
}

const GITHUB_ISSUE_ACTIONS: readonly string[] = ['opened', 'edited', 'closed', 'reopened', 'labeled', 'unlabeled'];

function githubChange(event: string, p: unknown): TrackerChange {
  const action = str(at(p, 'action'));
  const sender = str(at(p, 'sender', 'login')) ?? '';
  switch (event) {
    case 'issues': {
      const issue = num(at(p, 'issue', 'number'));
      if (issue === null || action === null || !GITHUB_ISSUE_ACTIONS.includes(action))
        return { kind: 'ignored', reason: `issues ${action ?? '?'}: not a change loopfleet follows` };
      const label = str(at(p, 'label', 'name'));
      return {
        kind: 'issue',
        forge: 'github',
        action: action as IssueAction,
        issue,
        labels: label === null ? [] : [label],
        sender,
      };
    }
    case 'issue_comment': {
      const number = num(at(p, 'issue', 'number'));
      const author = str(at(p, 'comment', 'user', 'login'));
      if (number === null || author === null || action !== 'created')
        return { kind: 'ignored', reason: `issue_comment ${action ?? '?'}: only new comments count` };
      return { kind: 'comment', forge: 'github', number, onPull: obj(at(p, 'issue', 'pull_request')) !== null, author };
    }
    case 'pull_request_review': {
      const pull = num(at(p, 'pull_request', 'number'));
      const author = str(at(p, 'review', 'user', 'login'));
      const state = str(at(p, 'review', 'state'))?.toLowerCase();
      if (pull === null || author === null || action !== 'submitted' || state === undefined)
        return { kind: 'ignored', reason: `pull_request_review ${action ?? '?'}: only submitted reviews count` };
      const mapped =
        state === 'approved' ? 'approved' : state === 'changes_requested' ? 'changes-requested' : 'commented';
      return { kind: 'review', forge: 'github', pull, state: mapped, author };
    }
    case 'check_run': {
      const sha = str(at(p, 'check_run', 'head_sha'));
      const conclusion = str(at(p, 'check_run', 'conclusion'));
      if (sha === null || !/^[0-9a-f]{40}$/.test(sha) || action !== 'completed' || conclusion === null)
        return { kind: 'ignored', reason: `check_run ${action ?? '?'}: only completed runs count` };
      const prs = at(p, 'check_run', 'pull_requests');
      const pulls = Array.isArray(prs)
        ? prs.map((pr) => num(obj(pr)?.number)).filter((n): n is number => n !== null)
        : [];
      return { kind: 'check', forge: 'github', sha, conclusion, pulls };
    }
    default:
      return {
        kind: 'ignored',
        reason: `${event || 'an event without X-GitHub-Event'}: not an event loopfleet follows`,
      };
  }
}

const GITLAB_ISSUE_ACTIONS: Record<string, IssueAction> = {
  open: 'opened',
  update: 'edited',
  close: 'closed',
  reopen: 'reopened',
};

function titles(v: unknown): string[] {
  return Array.isArray(v) ? v.map((l) => str(obj(l)?.title)).filter((t): t is string => t !== null) : [];
}

function gitlabChange(event: string, p: unknown): TrackerChange {
  const sender = str(at(p, 'user', 'username')) ?? '';
  switch (event) {
    case 'Issue Hook': {
      const issue = num(at(p, 'object_attributes', 'iid'));
      const action = GITLAB_ISSUE_ACTIONS[str(at(p, 'object_attributes', 'action')) ?? ''];
      if (issue === null || action === undefined)
        return { kind: 'ignored', reason: 'Issue Hook: not a change loopfleet follows' };
      const changes = obj(at(p, 'changes', 'labels'));
      if (action === 'edited' && changes !== null) {
        const before = titles(changes.previous);
        const after = titles(changes.current);
        const added = after.filter((l) => !before.includes(l));
        const removed = before.filter((l) => !after.includes(l));
        if (added.length > 0)
          return { kind: 'issue', forge: 'gitlab', action: 'labeled', issue, labels: added, sender };
        if (removed.length > 0)
          return { kind: 'issue', forge: 'gitlab', action: 'unlabeled', issue, labels: removed, sender };
      }
      return { kind: 'issue', forge: 'gitlab', action, issue, labels: [], sender };
    }
    case 'Note Hook': {
      const type = str(at(p, 'object_attributes', 'noteable_type'));
      const onPull = type === 'MergeRequest';
      const number = num(at(p, onPull ? 'merge_request' : 'issue', 'iid'));
      if (number === null || (type !== 'Issue' && !onPull) || sender === '')
        return { kind: 'ignored', reason: 'Note Hook: not a comment on an issue or merge request' };
      return { kind: 'comment', forge: 'gitlab', number, onPull, author: sender };
    }
    case 'Merge Request Hook': {
      const pull = num(at(p, 'object_attributes', 'iid'));
      const action = str(at(p, 'object_attributes', 'action'));
      if (pull === null || sender === '' || (action !== 'approved' && action !== 'unapproved'))
        return { kind: 'ignored', reason: `Merge Request Hook ${action ?? '?'}: only approvals count` };
      return { kind: 'review', forge: 'gitlab', pull, state: action, author: sender };
    }
    case 'Pipeline Hook': {
      const sha = str(at(p, 'object_attributes', 'sha'));
      const status = str(at(p, 'object_attributes', 'status'));
      if (
        sha === null ||
        !/^[0-9a-f]{40}$/.test(sha) ||
        status === null ||
        !['success', 'failed', 'canceled'].includes(status)
      )
        return { kind: 'ignored', reason: 'Pipeline Hook: only finished pipelines count' };
      const mr = num(at(p, 'merge_request', 'iid'));
      return { kind: 'check', forge: 'gitlab', sha, conclusion: status, pulls: mr === null ? [] : [mr] };
    }
    default:
      return {
        kind: 'ignored',
        reason: `${event || 'an event without X-Gitlab-Event'}: not an event loopfleet follows`,
      };
  }
}
