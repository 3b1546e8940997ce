/** A task's pull request, as recorded and as `status --json` prints it. Plain data only: every value survives a JSON round-trip. */

/**
 * A task's pull request (GitHub) or merge request (GitLab), as loopfleet last saw it. `pushed` is the
 * commit loopfleet last pushed to the branch: the lease of its next push. `answered` holds the ids of the
 * comments and reviews that already started an attempt (or were judged not to), so none starts two;
 * `ciAnswered` the head commit whose failing CI already sent the task back.
 */
export interface PrRecord {
  number: number;
  url: string;
  state: 'open' | 'merged' | 'closed';
  draft: boolean;
  ci: 'pending' | 'passing' | 'failing' | 'none';
  review: 'none' | 'approved' | 'changes-requested';
  pushed: string | null;
  /** the attempt whose commit was last pushed: a later push's comment counts what came after it */
  pushedAttempt: number;
  answered: string[];
  ciAnswered: string | null;
  /** the newest comment time (ISO) a sync has read: the next reads only what came after */
  commentsSince?: string | null;
  /** why the PR sent its task back (red CI, a review): the next push's comment says so */
  sentBackFor?: string | null;
}

/** What `status --json` says of a task's pull request. */
export interface PrStatusJson {
  number: number;
  url: string;
  state: PrRecord['state'];
  draft: boolean;
  ci: PrRecord['ci'];
  review: PrRecord['review'];
}
