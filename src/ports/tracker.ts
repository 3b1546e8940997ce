/**
 * What the engine asks of an issue tracker (GitHub Issues, Linear): the open issues carrying a label, who may ask
 * for work, the issues' relations, and the two ways the tracker hears back — state labels and one status
 * comment per issue. One instance is bound to one repository.
 *
 * Invariants every adapter keeps (besides the forge's: the token redacted, rate limits waited out within
 * bounds — see {@link ForgePort}):
 * - a list is read with conditional requests: an answer the tracker says is unchanged (304) costs no page
 *   reads beyond the first, and at most `maxPages` pages are read per pass;
 * - every text returned (titles, bodies, comments) is somebody's words: callers quote it before an agent
 *   sees it;
 * - nothing here closes an issue.
 */
import type { TrackerState, TrackerType } from '../domain/tracker-setting.js';

export interface TrackerIssue {
  /** the issue's number (GitHub's `#12`; Linear's within its team, `ENG-12` → 12) */
  number: number;
  title: string;
  body: string;
  /** the issue's web address */
  url: string;
  /** who opened it (GitHub: the login; Linear: the user's id) */
  author: string;
  labels: string[];
}

export interface IssueList {
  issues: TrackerIssue[];
  /** false when the tracker answered that nothing changed since the last read (the issues are the last read's) */
  changed: boolean;
  /** true when more issues matched than `maxPages` pages hold: the rest are read on a later pass */
  truncated: boolean;
}

export interface TrackerPermission {
  canWrite: boolean;
  /** the role the tracker named (`write`, `read`, `none`, …) */
  permission: string;
}

export interface StatusComment {
  /** GitHub's number, Linear's id */
  id: number | string;
  body: string;
}

export interface TrackerPort {
  readonly type: TrackerType;
  /** `owner/name` */
  readonly repo: string;
  /** open issues (never pull requests) carrying `label`, newest first, at most `maxPages` pages */
  issues(label: string, maxPages: number): Promise<IssueList>;
  /** the person who most recently put `label` on the issue (its events), or null when no event says */
  labelledBy(number: number, label: string): Promise<string | null>;
  /** the person's permission on the repository (GitHub: the collaborator permission API) */
  permission(login: string): Promise<TrackerPermission>;
  /** the open issues that must be done before this one: its "blocked by" dependencies and its open sub-issues */
  blockers(number: number): Promise<number[]>;
  /** adds and removes labels on the issue; a label already there (or already gone) is no error */
  relabel(number: number, add: readonly string[], remove: readonly string[]): Promise<void>;
  /** the issue's comment written by this tracker's own user that begins with `marker`, or null */
  findComment(number: number, marker: string): Promise<StatusComment | null>;
  /** posts a comment; never repeated on a 5xx (it may have been posted) */
  createComment(number: number, body: string): Promise<StatusComment>;
  editComment(id: StatusComment['id'], body: string): Promise<void>;
  /**
   * Linear: moves the issue to the workflow state the setting names for `state` (none named: nothing
   * happens). Trackers without workflow states have no such method.
   */
  moveTo?(number: number, state: TrackerState): Promise<void>;
  /** the user the token authenticates as */
  self(): Promise<string>;
  /** whether the repository has the label (its issues can carry it) */
  hasLabel(label: string): Promise<boolean>;
}
