/**
 * Whether the program a `command:` agent runs can be seen inside the sandbox. The sandbox mounts only the
 * system folders, the folders on PATH (never a home folder itself, /tmp, /run or /var) and the worktree
 * ({@link systemMounts}): a program kept elsewhere — `/home/me/bin/my-agent` named by path, or a link on
 * PATH that points into a home — is simply "not found" inside. This says so before the role starts, with
 * what to do.
 */
import { lstat, readlink } from 'node:fs/promises';
import path from 'node:path';
import { isExecutable, isInside } from '../fs/paths.js';
import { SYSTEM_FOLDERS, homeFolders, toolchainMounts } from './system.js';

/** Builtins and keywords of /bin/sh: no program to find. */
const SHELL_WORDS = new Set([
  '.',
  ':',
  'cd',
  'source',
  'set',
  'export',
  'unset',
  'true',
  'false',
  'test',
  'echo',
  'printf',
  'read',
  'eval',
  'exit',
  'if',
  'while',
  'for',
  'case',
  'until',
  'time',
  'ulimit',
  'umask',
  'trap',
  'wait',
  'command',
  'type',
  'alias',
  'return',
  'shift',
  'readonly',
  'local',
]);

/** The program of a simple command line: its first word after `NAME=value` assignments and `exec`/`env`; null when it is not a plain word. */
export function programOf(command: string): string | null {
  const words = command.trim().split(/\s+/);
  let i = 0;
  while (i < words.length && (/^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i]!) || words[i] === 'exec' || words[i] === 'env'))
    i++;
  const word = words[i];
  if (word === undefined || !/^[A-Za-z0-9_@%+=:,./~-]+$/.test(word) || SHELL_WORDS.has(word)) return null;
  return word;
}

/** The folders whose files are visible inside a sandbox for `env` and the worktree `cwd`. */
async function visibleFolders(
  env: Record<string, string>,
  cwd: string,
): Promise<{ visible: string[]; hidden: string[] }> {
  const homes = await homeFolders(env);
  const tools = await toolchainMounts(env, homes, [cwd]);
  return {
    visible: [...SYSTEM_FOLDERS, cwd, ...tools.map((m) => m.dest)],
    // A home inside a system folder (/opt/someone) is emptied.
    hidden: homes.filter((h) => SYSTEM_FOLDERS.some((s) => isInside(h, s))),
  };
}

/**
 * Null when the program of `command` will be found inside the sandbox (or the line is not a plain
 * command, so nothing can be said); else the message: the program, why, what to do.
 */
export async function invisibleProgram(
  command: string,
  env: Record<string, string>,
  cwd: string,
  who: string,
): Promise<string | null> {
  const program = programOf(command);
  if (program === null) return null;
  let found: string | null = null;
  if (program.includes('/')) {
    const abs = path.resolve(cwd, program.replace(/^~(?=\/)/, env.HOME ?? process.env.HOME ?? '~'));
    if (!(await isExecutable(abs))) return `${who} runs ${program}, which is not an executable file on this machine`;
    found = abs;
  } else {
    for (const dir of (env.PATH ?? '').split(':')) {
      if (!path.isAbsolute(dir)) continue;
      if (await isExecutable(path.join(dir, program))) {
        found = path.join(dir, program);
        break;
      }
    }
    if (found === null)
      return `${who} runs \`${program}\`, which is not on PATH (${env.PATH ?? 'no PATH'}): install it, or name it by its full path`;
  }
  const { visible, hidden } = await visibleFolders(env, cwd);
  const sees = (p: string) => visible.some((v) => isInside(p, v)) && !hidden.some((h) => isInside(p, h));
  // Links are followed as the sandbox would: a relative target from where the link is seen.
  let at = found;
  for (let hop = 0; hop < 40 && sees(at); hop++) {
    if (!(await lstat(at)).isSymbolicLink()) return null;
    at = path.resolve(path.dirname(at), await readlink(at));
  }
  if (sees(at)) return null;
  const shown = at === found ? found : `${found} (a link to ${at})`;
  const folder = path.dirname(at);
  return (
    `${who} runs ${shown}, which the sandbox cannot see: it mounts only the system folders (/usr, /bin, /etc, /opt, …), ` +
    `the folders on PATH (never a home folder itself, /tmp, /run or /var) and the worktree. ` +
    `Install it under /usr/local/bin, or put ${folder} on PATH (a folder on PATH is bound read-only) and name it by its bare name`
  );
}
