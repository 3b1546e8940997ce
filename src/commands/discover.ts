import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { ExecaRunner } from '../adapters/sandbox/execa-runner.js';
import { FsWorkspace } from '../adapters/workspace/fs-workspace.js';
import { SimpleGitAdapter } from '../adapters/git/simple-git.js';
import { parseBacklog } from '../core/backlog/parse.js';
import { byPriority, knownItems, splitNew, type Proposal } from '../core/discover/proposal.js';
import type { DiscoverSource } from '../domain/types.js';
import { commandSources, findProposals, issueForgeFor, type RemoteSources } from './discover-run.js';
import { addProposals } from '../core/discover/write.js';
import { FsBacklogFile } from '../adapters/store/file-store.js';
import { personEnv, taskEnv } from '../core/attempt/task-env.js';
import { WORK_DIR } from '../domain/layout.js';
import { loadBacklog, resolveBase, type Repo } from './repo.js';
import { processAlive } from '../adapters/store/process-identity.js';

export interface DiscoverOptions {
  dryRun: boolean;
  limit: number | null;
  only: ReadonlySet<DiscoverSource>;
  githubLabel: string;
  env: NodeJS.ProcessEnv;
  /** replaces the npm and gh commands (tests replay recorded output) */
  remote?: (cwd: string, env: Record<string, string>) => RemoteSources;
}

/** The throw-away checkouts: `.loop-worktrees/.discover-<pid>-<random>` (prune leaves dot folders alone). */
const SCRATCH_PREFIX = '.discover-';

/** Checkouts an interrupted discover left behind (its process is gone); a running one's is kept. */
async function removeAbandoned(git: SimpleGitAdapter): Promise<void> {
  for (const w of await git.listWorktrees()) {
    const m = /^\.discover-(\d+)-[0-9a-f]+$/.exec(basename(w.path));
    if (m && basename(dirname(w.path)) === WORK_DIR && !processAlive(Number(m[1])))
      await git.removeWorktree(w.path, true);
  }
}

function line(p: Proposal): string {
  return `  + ${`[${p.priority}]`.padEnd(8)} ${p.title}  (source: ${p.source})`;
}

/**
 * `loopfleet discover`: finds candidate tasks on base and proposes them under `## Discovered` in BACKLOG.md.
 * Never runs a task. The checks run in a throw-away worktree of base, so the person's checkout is not
 * touched; BACKLOG.md is only added to, through the re-read-before-write path.
 */
export async function discover(repo: Repo, options: DiscoverOptions, out: (line: string) => void): Promise<number> {
  const backlog = await loadBacklog(repo, false);
  const git = new SimpleGitAdapter(repo.root);
  const base = await resolveBase(repo, backlog, git);
  const runner = new ExecaRunner();
  const sandboxed = backlog.config.sandbox !== 'off' && (await runner.sandboxAvailable());
  const toolEnv = Object.fromEntries(
    Object.entries(options.env).filter((e): e is [string, string] => e[1] !== undefined),
  );

  out(`loopfleet discover — ${repo.root} (base ${base}${sandboxed ? '' : ', checks unsandboxed'})`);
  await removeAbandoned(git);
  const dir = join(repo.workDir, `${SCRATCH_PREFIX}${process.pid}-${randomBytes(4).toString('hex')}`);
  await git.ensureExcluded(`/${WORK_DIR}/`);
  await git.addWorktreeDetached(dir, base);
  let found: Proposal[];
  try {
    const projectEnv = taskEnv(options.env, {
      taskId: 'discover',
      worktree: dir,
      branch: base,
      base,
      gitRoot: repo.root,
      port: backlog.config.ports.from,
    });
    // Only the finders that run the project's commands, or npm, need its dependencies and ignored files.
    const needsProject = options.only.has('tests') || options.only.has('lint') || options.only.has('deps');
    const prepared = needsProject ? await new FsWorkspace(repo.workDir).prepare(repo.root, dir) : null;
    if (prepared !== null && backlog.config.setup !== null && prepared.deps.method === 'none') {
      // The person's own setup command on base, as the pipeline runs it there: outside the sandbox, with their environment minus loopfleet's credentials.
      const hostEnv = personEnv(options.env, {
        taskId: 'discover',
        worktree: dir,
        branch: base,
        base,
        gitRoot: repo.root,
        port: backlog.config.ports.from,
      });
      const setup = await runner.run(backlog.config.setup, {
        cwd: dir,
        env: hostEnv,
        timeoutMs: backlog.config.setupTimeoutMs,
      });
      out(
        `  · setup \`${backlog.config.setup}\` ${setup.exitCode === 0 ? 'done' : `failed (exit ${setup.exitCode}): tests and lint may fail for that reason`}`,
      );
    }
    found = await findProposals({
      runner,
      dir,
      base,
      backlog,
      projectEnv,
      sandboxed,
      remote: (options.remote ?? ((cwd, env) => commandSources(runner, cwd, env)))(dir, toolEnv),
      only: options.only,
      githubLabel: options.githubLabel,
      ...(options.only.has('issues') ? { issueForge: await issueForgeFor(backlog.config, git, options.env) } : {}),
      note: (l) => out(`  · ${l}`),
    });
  } finally {
    await git.removeWorktree(dir, true);
  }

  const ordered = byPriority(found);
  const now = parseBacklog(await readFile(repo.backlogPath, 'utf8'), repo.backlogPath).backlog;
  const { fresh, existing } = splitNew(ordered, knownItems(now.tasks));
  const chosen = options.limit === null ? fresh : fresh.slice(0, options.limit);
  const held = fresh.length - chosen.length;
  out('');
  out(
    `${fresh.length} new proposal(s)${existing.length > 0 ? `, ${existing.length} already in BACKLOG.md` : ''}${held > 0 ? `; --limit ${options.limit} keeps the first ${chosen.length}` : ''}${chosen.length > 0 ? ':' : ''}`,
  );
  for (const p of chosen) out(line(p));
  if (options.dryRun) {
    out('');
    out('Dry run: BACKLOG.md is unchanged.');
    return 0;
  }
  if (chosen.length === 0) return 0;
  const added = await addProposals(new FsBacklogFile(repo.backlogPath), ordered, options.limit);
  out('');
  out(`Added ${added.length} under ## Discovered in ${repo.backlogPath}.`);
  out('They run once you move them out of that section, or with `discovered: run` in the front matter.');
  return 0;
}
