/**
 * Changes that lead out of the task branch once it is merged: symlinks out of the repository, and files
 * that decide what the person's own tools do outside the sandbox — `.worktreeinclude` (which ignored
 * files are copied into every later worktree), files the person's git configuration includes, the hook
 * folder their `core.hooksPath` names, and the script `setup:` runs on the host.
 */
import ignore from 'ignore';
import type { ConfigReach, DiffEntry } from '../../ports/git.js';
import { simpleCommands } from './check-definition.js';

/** What the guard knows of the repository besides the diff: computed once per run. */
export interface LeadsOutFacts {
  reach: ConfigReach;
  /** the setup commands that will run for this task and later ones (the front matter's and the task's) */
  setup: Array<string | null>;
}

const SHELLS = new Set([
  'sh',
  'bash',
  'zsh',
  'dash',
  'ksh',
  'source',
  '.',
  'node',
  'python',
  'python3',
  'ruby',
  'perl',
  'deno',
  'bun',
  'npx',
  'tsx',
]);

/**
 * Repository files a setup command runs: `./setup.sh`, `scripts/setup.sh`, `bash setup.sh`, `node tools/x.js`
 * (a word with a `/`, or the argument of a shell or interpreter), as repository-relative paths.
 */
export function setupFiles(command: string): string[] {
  const files = new Set<string>();
  for (const words of simpleCommands(command)) {
    words.forEach((w, i) => {
      if (!/^[\w./-]+$/.test(w) || w.startsWith('-') || w.startsWith('/')) return;
      const script =
        w.includes('/') || (i > 0 && SHELLS.has(words[0]!) && words.slice(1, i).every((x) => x.startsWith('-')));
      if (!script) return;
      const rel = normalise(w);
      if (rel !== null && rel !== '') files.add(rel);
    });
  }
  return [...files];
}

/** `a/./b/../c` → `a/c`; null when a step leaves the repository (a `..` above its top). */
function normalise(rel: string): string | null {
  const parts: string[] = [];
  for (const part of rel.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (parts.length === 0) return null;
      parts.pop();
    } else parts.push(part);
  }
  return parts.join('/');
}

/**
 * Where a symlink at `link` with `target` leads, resolved from the link's folder step by step, following
 * the links the diff itself adds (`links`, path → target); null when a step goes above the top of the
 * repository. Links already on base are the person's and are taken as plain folders.
 */
export function resolveLink(
  link: string,
  target: string,
  links: ReadonlyMap<string, string>,
  depth = 0,
): string | null {
  if (target.startsWith('/')) return null;
  if (depth > 40) return null; // a loop: git would not resolve it either; refuse rather than guess
  const parts = link.split('/').slice(0, -1);
  for (const part of target.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (parts.length === 0) return null;
      parts.pop();
      continue;
    }
    parts.push(part);
    const here = parts.join('/');
    const next = links.get(here);
    if (next !== undefined && here !== link) {
      const resolved = resolveLink(here, next, links, depth + 1);
      if (resolved === null) return null;
      parts.splice(0, parts.length, ...(resolved === '' ? [] : resolved.split('/')));
    }
  }
  return parts.join('/');
}

function dotGit(component: string): boolean {
  return /^\.git[. ]*$/i.test(component);
}

/** Reasons for symlinks whose target is absolute, leaves the repository or points into `.git`. Not lifted by `files:`. */
export function symlinkRules(entries: readonly DiffEntry[], targets: ReadonlyMap<string, string>): string[] {
  const reasons: string[] = [];
  for (const e of entries) {
    if (e.status === 'D' || e.newMode !== '120000') continue;
    const target = targets.get(e.path);
    if (target === undefined) continue;
    const resolved = resolveLink(e.path, target, targets);
    if (resolved === null) reasons.push(`guard: symlink ${e.path} points outside the repository (${target})`);
    else if (resolved.split('/').some(dotGit)) reasons.push(`guard: symlink ${e.path} points into .git (${target})`);
  }
  return reasons;
}

/** The folders whose files git runs as hooks: `core.hooksPath`, and for husky 9's `.husky/_` the `.husky` its wrappers call. */
function hookFolders(hooksPath: string | null): string[] {
  if (hooksPath === null) return [];
  const parent = hooksPath.split('/').slice(0, -1).join('/');
  return hooksPath.split('/').at(-1) === '_' && parent !== '' ? [parent] : [hooksPath];
}

/**
 * Reasons for changed paths that the person's tools act on outside the sandbox. Each is lifted by the
 * task's `files:` (`exempt`) or by a `!` pattern in `protect:` that matches the path.
 */
export function leadsOutRules(
  changed: readonly string[],
  facts: LeadsOutFacts,
  protect: readonly string[],
  exempt: (path: string) => boolean,
): string[] {
  const rules: Array<{ pattern: string; why: string }> = [
    { pattern: '/.worktreeinclude', why: 'it decides which of your ignored files are copied into every worktree' },
    ...facts.reach.includes.map((p) => ({
      pattern: `/${p}`,
      why: 'your git configuration includes it (include.path)',
    })),
    ...hookFolders(facts.reach.hooksPath).map((folder) => ({
      pattern: `/${folder}/**`,
      why: `it is in your core.hooksPath (${facts.reach.hooksPath}): git runs it as a hook`,
    })),
    ...facts.setup.flatMap((c) =>
      c === null
        ? []
        : setupFiles(c).map((p) => ({ pattern: `/${p}`, why: `setup \`${c}\` runs it outside the sandbox` })),
    ),
  ];
  const reasons: string[] = [];
  for (const path of changed) {
    if (exempt(path)) continue;
    for (const rule of rules) {
      // The rule first, then the person's protect: list, so that a later `!path` there lifts it.
      if (
        !ignore().add([rule.pattern]).ignores(path) ||
        !ignore()
          .add([rule.pattern, ...protect])
          .ignores(path)
      )
        continue;
      reasons.push(`guard: ${path} changed — ${rule.why}; name it in the task's files: to allow it`);
      break;
    }
  }
  return reasons;
}
