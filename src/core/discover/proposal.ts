/**
 * What discover proposes, and how a proposal is recognised again on a later run.
 *
 * Invariant: a proposal is new only when no item of the backlog — wherever it is, whoever wrote it, done
 * or not — has the same match key. Keys carry no line number except as a last resort, so a TODO whose
 * line moved is still the same finding.
 */
import type { DiscoverSource, TaskPriority, TaskSpec } from '../../domain/types.js';

export interface Proposal {
  /** which finder produced it */
  from: DiscoverSource;
  title: string;
  /** the `source:` value, e.g. `todo lib/parse.py:88` */
  source: string;
  priority: TaskPriority;
  /** a narrowed `check:`, when the finding has one */
  check?: string;
  /** plain lines written as the item's description */
  summary: string[];
  /** text from outside the backlog (comments, command output, issue bodies), written fenced so it can never become a field */
  quoted?: string;
  /** the TODO comment's text, for TODO proposals: what identifies it when its line moves */
  comment?: string;
  /** within one priority, lower runs first (security before everything else) */
  rank: number;
}

const PRIORITY_ORDER: Record<TaskPriority, number> = { high: 0, normal: 1, low: 2 };

/** Highest priority first; within one, by rank; otherwise in the order found. Stable. */
export function byPriority(proposals: readonly Proposal[]): Proposal[] {
  return proposals
    .map((p, i) => ({ p, i }))
    .sort((a, b) => PRIORITY_ORDER[a.p.priority] - PRIORITY_ORDER[b.p.priority] || a.p.rank - b.p.rank || a.i - b.i)
    .map(({ p }) => p);
}

/** Lowercase, whitespace collapsed, comment closers and trailing punctuation dropped. */
export function normalizeText(text: string): string {
  return text
    .replace(/\*\/|-->/g, ' ')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .replace(/[\s.:;,!]+$/, '')
    .trim();
}

/** `todo lib/parse.py:88` → `lib/parse.py`; null for another kind of source. */
export function todoPath(source: string): string | null {
  const m = /^todo (.+):\d+$/.exec(source);
  return m ? m[1]! : null;
}

/** An item already in the backlog, as far as matching is concerned. */
export interface KnownItem {
  source: string;
  /** title and description, normalized */
  text: string;
}

export function knownItems(tasks: readonly TaskSpec[]): KnownItem[] {
  return tasks
    .filter((t): t is TaskSpec & { source: string } => t.source !== undefined)
    .map((t) => ({ source: t.source, text: normalizeText(`${t.title}\n${t.description}`) }));
}

/**
 * Splits proposals into the new ones and those the backlog already has. A TODO is known when an item with
 * a TODO source in the same file quotes its comment (the line may have moved), or — when that item's text
 * no longer quotes any comment found now — when its source is exactly the same file and line. Every other
 * kind is known by its exact source. Each backlog item accounts for at most one TODO.
 */
export function splitNew(
  proposals: readonly Proposal[],
  known: readonly KnownItem[],
): { fresh: Proposal[]; existing: Proposal[] } {
  const fresh: Proposal[] = [];
  const existing: Proposal[] = [];
  const sources = new Set(known.map((k) => k.source));
  const todoItems = known.filter((k) => todoPath(k.source) !== null);
  const used = new Set<KnownItem>();
  const todos = proposals.filter((p) => p.comment !== undefined);
  const matched = new Set<Proposal>();

  // First by comment text, so that a TODO that moved is found before another one takes its old line.
  for (const p of todos) {
    const path = todoPath(p.source);
    const comment = normalizeText(p.comment ?? '');
    if (comment === '') continue;
    const item = todoItems.find((k) => !used.has(k) && todoPath(k.source) === path && k.text.includes(comment));
    if (item) {
      used.add(item);
      matched.add(p);
    }
  }
  const quotesAny = (k: KnownItem) =>
    todos.some(
      (p) =>
        todoPath(p.source) === todoPath(k.source) &&
        normalizeText(p.comment ?? '') !== '' &&
        k.text.includes(normalizeText(p.comment ?? '')),
    );
  for (const p of todos) {
    if (matched.has(p)) continue;
    const item = todoItems.find((k) => !used.has(k) && k.source === p.source && !quotesAny(k));
    if (item) {
      used.add(item);
      matched.add(p);
    }
  }

  const seen = new Set<string>();
  for (const p of proposals) {
    const isKnown = p.comment !== undefined ? matched.has(p) : sources.has(p.source);
    // Two findings with one source in the same run (two tools on one file) are one proposal.
    if (isKnown || seen.has(p.source)) existing.push(p);
    else fresh.push(p);
    seen.add(p.source);
  }
  return { fresh, existing };
}
