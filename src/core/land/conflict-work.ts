/**
 * A conflict is work, not a dead end: a branch that no longer rebases onto base is replayed onto it, its
 * conflict markers left in the working tree, and its next attempt is told where they are. The implementer
 * resolves them; the guard refuses any commit that still holds a marker line, so none ever lands.
 */
import type { ConflictDetail } from '../../domain/types.js';
import { replayedRef } from '../../domain/layout.js';
import type { GitPort } from '../../ports/git.js';
import { conflictDetail } from './conflict-forecast.js';
import { quoteUntrusted } from '../text/untrusted.js';

/** How much of the markers the evidence quotes: enough to see both sides, small enough for a prompt. */
const MAX_EVIDENCE_HUNKS = 12;

export interface ReplayedConflict {
  files: string[];
  /** for the detail pane (status `conflict`) and the report */
  detail: ConflictDetail;
  /** what the next attempt is told */
  evidence: string;
}

/**
 * Replays task `id`'s branch onto `base` in its worktree (the old tip kept under `refs/loopfleet/replayed/<id>`)
 * and says what the next attempt must resolve. Throws what the replay throws; then nothing changed.
 */
export async function replayConflict(
  git: Pick<GitPort, 'replayOnto'>,
  where: { id: string; worktree: string; branch: string; base: string },
): Promise<ReplayedConflict> {
  const ref = replayedRef(where.id);
  const replay = await git.replayOnto(where.worktree, where.base, ref);
  const detail = conflictDetail(where.base, replay);
  return { files: replay.files, detail, evidence: conflictEvidence(where.base, detail, { branch: where.branch, ref }) };
}

/**
 * What the next attempt is told of a conflict with `base`: the files and the marker regions, and — when the
 * branch was replayed — that the markers are in its worktree to resolve. Without a replay (git refused it)
 * the hunks are there to read, and the attempt works on the branch as it is.
 */
export function conflictEvidence(
  base: string,
  detail: ConflictDetail,
  replayed: { branch: string; ref: string } | null,
): string {
  const files = detail.files.length > 0 ? detail.files.join(', ') : 'no file git could name';
  // The hunks hold both sides' text, the task's agent-written side among them: quoted, so no hunk speaks for loopfleet.
  const shown = detail.hunks
    .slice(0, MAX_EVIDENCE_HUNKS)
    .map((h, i) =>
      quoteUntrusted(
        `conflict region ${i + 1} (in the file named on its first line), text from both branches`,
        `${h.file}:\n${h.hunk}`,
        4_000,
      ),
    );
  const more =
    detail.hunks.length > shown.length ? [`… and ${detail.hunks.length - shown.length} more conflict regions`] : [];
  const noMarkers = detail.files.filter((f) => !detail.hunks.some((h) => h.file === f));
  const replay =
    replayed === null
      ? [
          `The branch could not be replayed onto ${base}: these are the places where the two disagree, as merging them would mark them.`,
        ]
      : [
          `The worktree now holds this task's change replayed onto ${base} as it is now, uncommitted. Where both changed the same lines, the file has conflict markers: \`<<<<<<< ${base}\` (what ${base} has), \`=======\`, then this task's version up to \`>>>>>>> ${replayed.branch}\`.`,
          `Resolve every conflict: keep what ${base} changed and what this task needs, and remove every marker line. A change that still contains a marker line is refused. The check must pass on the result. The branch as it was is kept under ${replayed.ref}.`,
        ];
  return [
    `This task's change no longer applies to ${base}: ${base} changed the same places. Conflicts in: ${files}.`,
    ...replay,
    ...(noMarkers.length > 0
      ? [`These conflict without markers (one side deleted or renamed the file): ${noMarkers.join(', ')}.`]
      : []),
    ...shown,
    ...more,
  ].join('\n\n');
}
