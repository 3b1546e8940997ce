/**
 * The configurations of `loopfleet eval`: `--config NAME=DIR`, each an overlay of the repository's own
 * setup. DIR's `agents/<role>.md` replace the repository's (which replace the packaged ones), and the front
 * matter of DIR's `BACKLOG.md` replaces the repository's key by key. Everything is read and checked here,
 * before the eval writes anything: a bad name, folder, role file or front matter is exit 2, naming it.
 */
import { readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { stringify } from 'yaml';
import { fsTextFiles } from '../adapters/store/file-store.js';
import { readFrontMatter } from '../core/backlog/front-matter.js';
import { parseBacklog } from '../core/backlog/parse.js';
import { loadRoles, type RoleDefinition } from '../core/roles/definitions.js';
import { InputErrors, UsageError, type InputError } from '../domain/errors.js';
import type { Backlog, Role } from '../domain/types.js';
import type { Repo } from './repo.js';
import { PACKAGE_ROOT } from './services.js';

/** The one task of an eval run's backlog; its text and hidden tests are given through {@link Overrides.amend}. */
export const EVAL_TASK_ID = 'E-1';

/**
 * Front matter keys an eval run leaves out: the run has one task on a branch of its own repository, lands
 * nothing and tells no one — so no base branch, landing, forge, tracker or notification of the person's.
 */
const LEFT_OUT = ['base', 'land', 'remote', 'forge', 'pr', 'tracker', 'notify', 'notify_on', 'concurrency'];

export interface EvalConfig {
  name: string;
  /** the folder given, null for the repository's own setup */
  dir: string | null;
  roles: Record<Role, RoleDefinition>;
  /** BACKLOG.md of each task's run: the merged front matter and the one task */
  backlogText: string;
  backlog: Backlog;
}

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$/;

/** `NAME=DIR` as given on the command line. */
export function parseConfigArg(raw: string, cwd: string): { name: string; dir: string } {
  const eq = raw.indexOf('=');
  const name = eq < 0 ? '' : raw.slice(0, eq);
  const dir = eq < 0 ? '' : raw.slice(eq + 1);
  if (!NAME_RE.test(name) || dir === '')
    throw new UsageError(
      `--config: '${raw}' is not NAME=DIR (a name of letters, digits, '.', '_' and '-', at most 40, then a folder)`,
    );
  return { name, dir: resolve(cwd, dir) };
}

function frontMatterOf(text: string, file: string): Record<string, unknown> {
  const errors: InputError[] = [];
  const fm = readFrontMatter(text, file, errors);
  if (errors.length > 0) throw new InputErrors(errors);
  const value: unknown = fm.doc?.toJS() ?? {};
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new UsageError(`${file}: the front matter must be a mapping of settings`);
  return value as Record<string, unknown>;
}

async function readOptional(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** The text of an eval run's BACKLOG.md: the repository's front matter with `overlay`'s keys over it. */
function runBacklogText(own: Record<string, unknown>, overlay: Record<string, unknown>): string {
  const merged: Record<string, unknown> = { ...own, ...overlay };
  for (const key of LEFT_OUT) delete merged[key];
  return `---\n${stringify(merged)}---\n\n# Eval\n\n- [ ] ${EVAL_TASK_ID} eval task\n`;
}

/**
 * The configurations to run: each `--config`, or the repository's own setup alone (named `repository`).
 * Role files fall back DIR → the repository's `agents/` → the packaged ones.
 */
export async function loadEvalConfigs(
  repo: Repo,
  args: ReadonlyArray<{ name: string; dir: string }>,
): Promise<EvalConfig[]> {
  const ownText = (await readOptional(repo.backlogPath)) ?? '';
  const own = frontMatterOf(ownText, repo.backlogPath);
  const given = args.length === 0 ? [{ name: 'repository', dir: null }] : args;
  const seen = new Set<string>();
  const configs: EvalConfig[] = [];
  for (const { name, dir } of given) {
    if (seen.has(name)) throw new UsageError(`--config: the name '${name}' is given twice`);
    seen.add(name);
    let overlay: Record<string, unknown> = {};
    let roles: Record<Role, RoleDefinition>;
    if (dir === null) {
      roles = await loadRoles(fsTextFiles, `${PACKAGE_ROOT}agents`, repo.root);
    } else {
      const kind = await stat(dir).catch(() => null);
      if (kind === null || !kind.isDirectory()) throw new UsageError(`--config ${name}: ${dir} is not a folder`);
      const backlogFile = join(dir, 'BACKLOG.md');
      const text = await readOptional(backlogFile);
      const agents = await stat(join(dir, 'agents')).catch(() => null);
      if (text === null && agents?.isDirectory() !== true)
        throw new UsageError(`--config ${name}: ${dir} has neither an agents/ folder nor a BACKLOG.md`);
      if (text !== null) overlay = frontMatterOf(text, backlogFile);
      // A role DIR does not define is the repository's own, then the packaged one.
      const agentsDir = join(dir, 'agents');
      const files = {
        async readText(path: string): Promise<string | null> {
          const found = await fsTextFiles.readText(path);
          if (found !== null || !path.startsWith(`${agentsDir}/`)) return found;
          return fsTextFiles.readText(join(repo.root, 'agents', path.slice(agentsDir.length + 1)));
        },
      };
      roles = await loadRoles(files, `${PACKAGE_ROOT}agents`, dir);
    }
    const backlogText = runBacklogText(own, overlay);
    const where = dir === null ? repo.backlogPath : join(dir, 'BACKLOG.md');
    const { backlog } = parseBacklog(backlogText, where);
    if (backlog.config.check === null && (backlog.config.checks ?? []).length === 0)
      throw new UsageError(`--config ${name}: no \`check:\` in the front matter; an eval task is judged by it`);
    configs.push({ name, dir, roles, backlogText, backlog });
  }
  return configs;
}
