/**
 * `loopfleet eval --from FILE`: the eval set from a candidates file (one an earlier eval wrote, edited by
 * the person — a task dropped, its text sharpened) instead of mining history again. The file is input like
 * any other: each kept task must name a commit of this repository and its real first parent, and test
 * paths that stay inside a worktree; anything else is exit 2 naming the file and the entry.
 */
import { readFile, stat } from 'node:fs/promises';
import { z } from 'zod';
import { firstParent } from '../adapters/git/eval-seed.js';
import { isOverlayPath } from '../adapters/git/scratch-trees.js';
import { UsageError } from '../domain/errors.js';

/** One commit looked at, and what became of it. */
export interface Candidate {
  commit: string;
  parent: string | null;
  title: string;
  /** the task an agent gets: the commit message */
  text: string;
  kept: boolean;
  why: string;
  /** test files the commit adds or changes: hidden from the agents, applied only for the check */
  tests: string[];
  /** the other files it changes (the human change) */
  code: string[];
  failToPass: string[];
  passToPass: number;
}

const MAX_BYTES = 8 * 1024 * 1024;
const SHA = z.string().regex(/^(?:[0-9a-f]{40}|[0-9a-f]{64})$/, 'a full commit id');

const CANDIDATES = z.array(
  z.object({
    commit: SHA,
    parent: SHA.nullable(),
    title: z.string(),
    text: z.string(),
    kept: z.boolean(),
    why: z.string(),
    tests: z.array(z.string()),
    code: z.array(z.string()),
    failToPass: z.array(z.string()),
    passToPass: z.number().int().min(0),
  }),
);

export async function readCandidates(root: string, file: string): Promise<Candidate[]> {
  const size = await stat(file).catch(() => null);
  if (size === null || !size.isFile()) throw new UsageError(`--from: ${file} is not a file`);
  if (size.size > MAX_BYTES) throw new UsageError(`--from: ${file} is over ${MAX_BYTES / 1024 / 1024} MB`);
  let json: unknown;
  try {
    json = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new UsageError(`--from: ${file} is not JSON: ${(error as Error).message}`);
  }
  const parsed = CANDIDATES.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new UsageError(`--from: ${file}: at ${issue.path.join('.') || 'the top'}: ${issue.message}`);
  }
  for (const [i, c] of parsed.data.entries()) {
    if (!c.kept) continue;
    const at = `--from: ${file}: entry ${i} (${c.commit.slice(0, 12)})`;
    const parent = await firstParent(root, c.commit);
    if (parent === null || parent !== c.parent)
      throw new UsageError(`${at}: not a commit of this repository whose first parent is ${c.parent ?? 'null'}`);
    if (c.tests.length === 0) throw new UsageError(`${at}: a kept task needs its test files`);
    const bad = c.tests.find((p) => !isOverlayPath(p));
    if (bad !== undefined) throw new UsageError(`${at}: test path '${bad}' must be relative and outside .git`);
  }
  return parsed.data;
}
