/**
 * One read of the tracker: its labelled open issues that the file does not hold yet become items of
 * BACKLOG.md's `## Tracker` section — only those a person with write access opened or labelled.
 *
 * Invariants:
 * - an issue counts only when its author, or the person who last put the label on it (the issue's events),
 *   may write to the repository as the tracker's permission API answers; a label by anyone else starts
 *   nothing and is logged once per run;
 * - an issue whose `loopfleet` block the backlog's parser refuses writes nothing and is logged once per run;
 * - `after:` names only issues the file holds or this pass writes, so the file stays valid;
 * - an unchanged list (the tracker's 304) costs no further request; a tracker that cannot be read throws,
 *   and the caller runs on what the file holds.
 */
import type { TrackerSetting } from '../../domain/tracker-setting.js';
import { trackerTaskId } from '../../domain/tracker-setting.js';
import type { BacklogFile } from '../../ports/files.js';
import type { TrackerIssue, TrackerPort } from '../../ports/tracker.js';
import { blockKeys, renderIssueItem } from './issue-item.js';
import { addTrackerItems, heldIds, type NewItem } from './tracker-section.js';

export interface PassResult {
  /** ids written into BACKLOG.md */
  added: string[];
  /** the list the tracker gave (the last one when it said nothing changed) */
  issues: TrackerIssue[];
  changed: boolean;
  truncated: boolean;
}

export type PassLog = (level: 'info' | 'warn', message: string) => void;

export class TrackerPass {
  readonly #port: TrackerPort;
  readonly #setting: TrackerSetting;
  readonly #file: BacklogFile;
  readonly #log: PassLog;
  /** issues refused this run (who asked, what was wrong): each is logged once, asked about again next pass */
  readonly #said = new Set<string>();

  constructor(port: TrackerPort, setting: TrackerSetting, file: BacklogFile, log: PassLog) {
    this.#port = port;
    this.#setting = setting;
    this.#file = file;
    this.#log = log;
  }

  async run(): Promise<PassResult> {
    const list = await this.#port.issues(this.#setting.label, this.#setting.maxPages);
    const result: PassResult = { added: [], issues: list.issues, changed: list.changed, truncated: list.truncated };
    if (list.truncated)
      this.#once(
        'truncated',
        `tracker: more issues are labelled ${this.#setting.label} than ${this.#setting.maxPages} page(s) hold; the newest are read (tracker.pages)`,
      );
    const held = heldIds((await this.#file.read()).toString('utf8'), this.#file.path);
    const fresh = list.issues.filter((i) => !held.has(trackerTaskId(this.#setting, i.number)));
    if (fresh.length === 0) return result;
    const allowed: Array<{ issue: TrackerIssue; keys: string[]; rest: string }> = [];
    for (const issue of fresh) {
      const id = trackerTaskId(this.#setting, issue.number);
      const asker = await this.#asker(issue);
      if (asker === null) continue;
      const keys = blockKeys(id, issue.body);
      if (!keys.ok) {
        this.#once(`${id} block ${keys.problem}`, `tracker: ${id} not taken: ${keys.problem}`);
        continue;
      }
      allowed.push({ issue, keys: keys.lines, rest: keys.rest });
    }
    // Oldest first, so that the section reads in the order the issues were opened.
    allowed.sort((a, b) => a.issue.number - b.issue.number);
    const writing = new Set(allowed.map((a) => trackerTaskId(this.#setting, a.issue.number)));
    const items: NewItem[] = [];
    for (const { issue, keys, rest } of allowed) {
      const id = trackerTaskId(this.#setting, issue.number);
      const blockers = (await this.#port.blockers(issue.number))
        .map((n) => trackerTaskId(this.#setting, n))
        .filter((b) => b !== id && (held.has(b) || writing.has(b)));
      items.push({
        id,
        lines: renderIssueItem({ id, title: issue.title, body: rest, url: issue.url }, keys, blockers),
      });
    }
    result.added = await addTrackerItems(this.#file, items);
    for (const id of result.added) this.#log('info', `tracker: ${id} added to BACKLOG.md (## Tracker)`);
    return result;
  }

  /** Who with write access asked for the issue (its author, else who labelled it), or null — logged once. */
  async #asker(issue: TrackerIssue): Promise<string | null> {
    const id = trackerTaskId(this.#setting, issue.number);
    const author = await this.#port.permission(issue.author);
    if (author.canWrite) return issue.author;
    const labeller = await this.#port.labelledBy(issue.number, this.#setting.label);
    const by = labeller === null ? null : await this.#port.permission(labeller);
    if (labeller !== null && by?.canWrite === true) return labeller;
    const who =
      labeller === null ? `no labelling event found` : `labelled by ${labeller} (${by?.permission ?? 'unknown'})`;
    this.#once(
      `${id} ${issue.author} ${labeller ?? ''}`,
      `tracker: ${id} ignored: opened by ${issue.author} (${author.permission}), ${who}; only people with write access start work`,
    );
    return null;
  }

  #once(key: string, message: string): void {
    if (this.#said.has(key)) return;
    this.#said.add(key);
    this.#log('warn', message);
  }
}
