/**
 * The person's effective git configuration, read for programs that would run an agent's file.
 *
 * A program setting (a clean filter, a textconv, a merge driver, an fsmonitor...) is the person's to
 * choose; but when its program lies inside the repository or a worktree, or is relative (git runs it in
 * whatever tree it works in), the program git runs is the copy an agent wrote. Likewise every setting that
 * comes from an included file inside the working tree (`include.path=../.gitconfig`) is a setting a merged
 * branch can change. Each such setting is overridden for every git loopfleet runs (`overrides`, `-c`
 * values), and said once (`warnings`: doctor and the run's first lines).
 *
 * Invariant: an override never names a program but `false` or `cat`; the rest are empty values.
 */
import path from 'node:path';
import { GitExec, gitEnvironment } from './exec.js';

export interface GitConfigScan {
  /** `key=value` settings that turn each finding off, for `-c` */
  overrides: string[];
  /** one line per finding, naming the setting, where it came from and what loopfleet does instead */
  warnings: string[];
}

interface Entry {
  scope: string;
  origin: string;
  key: string;
  value: string;
}

/**
 * What each program-bearing setting is set to instead: empty where git then runs nothing, else a
 * program that does nothing and fails (a merge with that driver conflicts, rather than running a script).
 */
function neutralFor(key: string): string[] | null {
  const parts = key.split('.');
  const [section, last] = [parts[0], parts[parts.length - 1]];
  if (section === 'filter' && parts.length >= 3 && (last === 'clean' || last === 'smudge' || last === 'process')) {
    // An empty clean/smudge/process is no filter at all; `required=false` lets git store the file as it is.
    return [`${key}=`, `${parts.slice(0, -1).join('.')}.required=false`];
  }
  if (section === 'diff' && parts.length >= 3 && last === 'textconv') return [`${key}=cat`];
  if (section === 'diff' && parts.length >= 3 && last === 'command') return [`${key}=false`];
  if (section === 'merge' && parts.length >= 3 && last === 'driver') return [`${key}=false`];
  switch (key) {
    case 'diff.external':
    case 'core.editor':
    case 'sequence.editor':
    case 'gpg.program':
    case 'gpg.ssh.program':
    case 'gpg.x509.program':
    case 'core.askpass':
    case 'core.sshcommand':
    case 'core.fsmonitor':
      return [`${key}=false`];
    case 'core.pager':
      return [`${key}=cat`];
    case 'credential.helper':
      // An empty helper resets the list: no helper runs.
      return [`${key}=`];
    case 'core.hookspath':
      return [`${key}=/dev/null`];
    default:
      return null;
  }
}

function inside(file: string, dir: string): boolean {
  const rel = path.relative(dir, file);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** A word of a program setting that resolves into `root`: relative (resolved in a work tree) or below it. */
function pathIntoTree(value: string, root: string): string | null {
  for (const word of value.split(/\s+/)) {
    const bare = word.replace(/^['"]|['"]$/g, '');
    if (bare === '' || bare.startsWith('-') || bare.startsWith('$') || bare.startsWith('~')) continue;
    if (path.isAbsolute(bare) ? inside(path.normalize(bare), root) : bare.includes('/')) return bare;
  }
  return null;
}

function parse(stdout: string): Entry[] {
  const fields = stdout.split('\0');
  const entries: Entry[] = [];
  for (let i = 0; i + 2 < fields.length; i += 3) {
    const [scope, origin, pair] = [fields[i]!, fields[i + 1]!, fields[i + 2]!];
    const nl = pair.indexOf('\n');
    entries.push({
      scope,
      origin,
      key: nl === -1 ? pair : pair.slice(0, nl),
      value: nl === -1 ? '' : pair.slice(nl + 1),
    });
  }
  return entries;
}

/**
 * Scans the effective configuration of the repository whose top-level folder is `root` (worktrees of it
 * live below it, in `.loop-worktrees/`, so "inside the repository" covers them).
 */
export async function scanGitConfig(root: string): Promise<GitConfigScan> {
  const git = new GitExec(root, gitEnvironment());
  const gitDir = path.resolve(root, (await git.out(['rev-parse', '--git-common-dir'])).trim());
  const entries = parse(await git.out(['config', '--list', '--show-origin', '--show-scope', '-z']));
  const overrides: string[] = [];
  const warnings: string[] = [];
  const seen = new Set<string>();
  for (const entry of entries) {
    const key = entry.key.toLowerCase();
    const neutral = neutralFor(key);
    if (neutral === null || entry.value === '' || seen.has(key)) continue;
    const file = entry.origin.startsWith('file:') ? path.resolve(root, entry.origin.slice('file:'.length)) : null;
    const fromTree = file !== null && inside(file, root) && !inside(file, gitDir);
    // A relative hooks folder is always one of the working tree's.
    const target =
      key === 'core.hookspath' && !path.isAbsolute(entry.value) ? entry.value : pathIntoTree(entry.value, root);
    if (!fromTree && target === null) continue;
    seen.add(key);
    overrides.push(...neutral);
    const where = file === null ? entry.origin : path.relative(root, file) || file;
    const why = fromTree
      ? `comes from ${where}, a file in the working tree that a merged branch can change`
      : `runs ${target}, which resolves into the repository or a worktree (an agent's copy)`;
    warnings.push(`git config ${entry.key} (${entry.scope}, ${where}) ${why}: loopfleet runs git without it`);
  }
  return { overrides, warnings };
}
