import ignore from 'ignore';
import type { DiffEntry, GitPort } from '../../ports/git.js';
import { checkDefinitionRules, definitionFiles, type FileVersions } from './check-definition.js';
import { entryRules } from './entries.js';
import { newlyIgnored } from './ignored.js';
import { findSecrets, findSecretsInBinary } from './secrets.js';
import { testFileMatcher, weakenedTest } from './tests.js';
import { conflictMarkers } from './conflict-markers.js';
import { leadsOutRules, symlinkRules, type LeadsOutFacts } from './leads-out.js';

export { findSecrets } from './secrets.js';

/**
 * Guard checks on an attempt's diff, run before the check command: they stop changes no check would catch.
 * Each returns the reasons the attempt must fail, each naming its rule; empty means the diff may be
 * verified. A path under the task's `files:` is exempt from every rule but the diff's size and symlinks
 * out of the repository.
 */

export interface GuardInput {
  numstat: Array<{ path: string; added: number; deleted: number }>;
  /** unified diff text, to look for secrets in added lines */
  diff: string;
  maxFiles: number;
  maxLines: number;
  protect: string[];
  /** paths or patterns the task names in `files:`; they are exempt from `protect` and the content rules */
  allowed: string[];
}

/** Text files larger than this are not read for assertion counts (they are still held to max_file_bytes). */
const MAX_READ_BYTES = 2_000_000;

/** Whether a path is one the task names in `files:` (exempt from protect, the content and the size rules). */
export function exemption(allowed: readonly string[]): (path: string) => boolean {
  const matcher = ignore().add([...allowed]);
  return (path) => allowed.length > 0 && matcher.ignores(path);
}

export function guardDiff(input: GuardInput): string[] {
  const reasons: string[] = [];
  if (input.numstat.length > input.maxFiles) {
    reasons.push(`guard: the diff changes ${input.numstat.length} files, more than max_files ${input.maxFiles}`);
  }
  const lines = input.numstat.reduce((sum, f) => sum + f.added + f.deleted, 0);
  if (lines > input.maxLines) {
    reasons.push(`guard: the diff changes ${lines} lines, more than max_lines ${input.maxLines}`);
  }
  const protectedPaths = ignore().add(input.protect);
  const exempt = exemption(input.allowed);
  for (const { path } of input.numstat) {
    if (protectedPaths.ignores(path) && !exempt(path)) {
      reasons.push(`guard: ${path} is protected (protect:); name it in the task's files: to allow the change`);
    }
  }
  reasons.push(...findSecrets(input.diff, exempt));
  reasons.push(...conflictMarkers(input.diff, exempt));
  return reasons;
}

export interface AttemptGuardInput extends GuardInput {
  git: GitPort;
  worktree: string;
  base: string;
  maxFileBytes: number;
  maxBytes: number;
  /** the front matter's `tests:` patterns */
  tests: string[];
  /** the check command, null when there is none */
  check: string | null;
  /** untracked ignored paths of the working tree after the commit */
  ignored: string[];
  /** the person's configuration and setup that reach into the repository */
  facts: LeadsOutFacts;
  /** `base...HEAD` file by file when the caller has it (a diff summary's `entries`); else asked for */
  entries?: readonly DiffEntry[];
}

/** A blob's text; null for none (an all-zero id), a gitlink, or one over MAX_READ_BYTES. */
async function text(git: GitPort, sha: string): Promise<string | null> {
  if (/^0+$/.test(sha)) return null;
  return (await git.readBlob(sha, MAX_READ_BYTES))?.text ?? null;
}

/** Every guard rule on a committed attempt: the diff's rules, what git would carry, tests, and the check's definition. */
export async function guardAttempt(input: AttemptGuardInput): Promise<string[]> {
  const reasons = guardDiff(input);
  const exempt = exemption(input.allowed);
  const entries = input.entries ?? (await input.git.diffEntries(input.worktree, input.base));
  reasons.push(...entryRules(entries, input.diff, input, exempt));

  // Where each added symlink points: a link out of the repository is refused even under `files:`.
  const targets = new Map<string, string>();
  for (const e of entries) {
    if (e.status === 'D' || e.newMode !== '120000') continue;
    // A target too long to read is taken as leading out (an absolute path, as far as the rule goes).
    targets.set(e.path, (await input.git.readBlob(e.newSha, 4096))?.text ?? '/… (a target of more than 4096 bytes)');
  }
  reasons.push(...symlinkRules(entries, targets));
  reasons.push(
    ...leadsOutRules(
      entries.map((e) => e.path),
      input.facts,
      input.protect,
      exempt,
    ),
  );

  for (const e of entries) {
    if (!e.binary || e.status === 'D' || exempt(e.path)) continue;
    const content = await text(input.git, e.newSha);
    if (content !== null) reasons.push(...findSecretsInBinary(e.path, content));
  }

  const isTest = testFileMatcher(input.tests);
  for (const e of entries) {
    if (!isTest(e.path) || exempt(e.path) || e.binary) continue;
    const base = e.status === 'A' ? null : await text(input.git, e.oldSha);
    const next = e.status === 'D' ? null : await text(input.git, e.newSha);
    if (e.status === 'D') reasons.push(...weakenedTest(e.path, base ?? '', null));
    else reasons.push(...weakenedTest(e.path, base, next ?? ''));
  }

  const changed = entries.map((e) => e.path).filter((p) => !exempt(p));
  const files = new Map<string, FileVersions>();
  for (const path of definitionFiles(changed)) {
    const e = entries.find((x) => x.path === path)!;
    files.set(path, { path, base: await text(input.git, e.oldSha), next: await text(input.git, e.newSha) });
  }
  reasons.push(...checkDefinitionRules(input.check, changed, files));

  const gitignores: FileVersions[] = [];
  for (const e of entries) {
    if (e.path.split('/').at(-1) !== '.gitignore' || exempt(e.path)) continue;
    gitignores.push({ path: e.path, base: await text(input.git, e.oldSha), next: await text(input.git, e.newSha) });
  }
  reasons.push(...newlyIgnored(input.ignored, gitignores));
  return [...new Set(reasons)];
}
