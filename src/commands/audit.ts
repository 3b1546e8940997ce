import { join } from 'node:path';
import { ExecaRunner } from '../adapters/sandbox/execa-runner.js';
import { sandboxSelfTest } from '../adapters/sandbox/selftest.js';
import { hostSandboxCause } from '../adapters/sandbox/userns-diagnosis.js';
import { SimpleGitAdapter } from '../adapters/git/simple-git.js';
import { fsTextFiles } from '../adapters/store/file-store.js';
import { runnableTasks } from '../core/backlog/parse.js';
import { JsonBaselineStore } from '../adapters/store/baseline-store.js';
import { FsWorkspace } from '../adapters/workspace/fs-workspace.js';
import { GitScratchTrees } from '../adapters/git/scratch-trees.js';
import { baselinesFor } from '../core/verify/baseline.js';
import { checksOf, ownChecks, singleCheck } from '../core/verify/checks.js';
import { parseTestCounts } from '../core/verify/test-counts.js';
import { loadRoles } from '../core/roles/definitions.js';
import { backlogCeiling, ceilingLines } from '../core/budget/ceiling.js';
import { endOfLife, priceOf } from '../core/budget/pricing.js';
import { taskEnv } from '../core/attempt/task-env.js';
import { loadBacklog, resolveBase, type Repo } from './repo.js';
import { PACKAGE_ROOT, baselinesPath, credentialsFrom } from './services.js';

interface Finding {
  ok: boolean;
  weight: number;
  text: string;
}

/** Setup failing on base fails every task's first step: a ✗. Not run: the checks' results were known. */
function setupFinding(
  setup: string,
  base: string,
  run: { exitCode: number | null; timedOut: boolean; output: string } | null,
): Finding {
  if (run === null)
    return {
      ok: true,
      weight: 0,
      text: `setup \`${setup}\` not run: the checks' results on ${base} are known from an earlier run`,
    };
  if (!run.timedOut && run.exitCode === 0) return { ok: true, weight: 2, text: `setup \`${setup}\` passes on ${base}` };
  const last = run.output.trim().split('\n').slice(-3).join(' | ');
  const why = run.timedOut ? 'timed out (setup_timeout)' : `exited ${run.exitCode}`;
  return {
    ok: false,
    weight: 2,
    text: `setup \`${setup}\` ${why} on ${base}: every task would fail at setup${last === '' ? '' : ` — ${last}`}`,
  };
}

/**
 * `loopfleet audit`: is the backlog ready to spend money on, and what is the most it can spend?
 * Writes nothing in the user's checkout: checks run on base in a throw-away worktree.
 */
export async function audit(repo: Repo, env: NodeJS.ProcessEnv, out: (line: string) => void): Promise<number> {
  const backlog = await loadBacklog(repo, false);
  const git = new SimpleGitAdapter(repo.root);
  const base = await resolveBase(repo, backlog, git);
  const roles = await loadRoles(fsTextFiles, join(PACKAGE_ROOT, 'agents'), repo.root);
  const runner = new ExecaRunner();
  const findings: Finding[] = [];
  const open = runnableTasks(backlog).filter((t) => !t.done);
  const noCheck = open.filter((t) => checksOf(t, backlog.config).length === 0);
  findings.push({
    ok: noCheck.length === 0,
    weight: 3,
    text:
      noCheck.length === 0
        ? 'every task has a check command'
        : `no check command for ${noCheck.map((t) => t.id).join(', ')}: only the reviewer would judge them`,
  });

  const g = backlog.config.gates;
  const fg = backlog.config.fleetGates;
  const gatesSet = g.tokens !== null && g.timeMs !== null && (fg.costUsd !== null || fg.tokens !== null);
  findings.push({
    ok: gatesSet,
    weight: 2,
    text: gatesSet
      ? 'task and fleet gates are set'
      : 'set gates.tokens, gates.time and a fleet_cost or fleet_tokens gate so a night cannot run away',
  });

  try {
    credentialsFrom(
      env,
      Object.values(roles).some((r) => r.command === undefined),
    );
    findings.push({
      ok: true,
      weight: 2,
      text: `credentials resolve (${env.ANTHROPIC_BASE_URL ? `endpoint ${env.ANTHROPIC_BASE_URL}` : 'api.anthropic.com'})`,
    });
  } catch (error) {
    findings.push({ ok: false, weight: 2, text: (error as Error).message });
  }

  const sandbox = await runner.sandboxAvailable();
  const escapes = sandbox && backlog.config.sandbox !== 'off' ? await sandboxSelfTest(runner) : [];
  if (escapes.length > 0)
    findings.push({
      ok: false,
      weight: 2,
      text: `the sandbox is weaker than promised (a fleet would refuse to start): ${escapes.join('; ')}`,
    });
  const cause = sandbox || backlog.config.sandbox === 'off' ? null : await hostSandboxCause();
  const unavailable = `no sandbox (bubblewrap cannot run here${cause === null ? '' : `: ${cause.message}`}): checks of agent-written code will be refused and the agent shell tool off (${cause === null ? 'install bubblewrap' : `fix: ${cause.fix}`}, or set sandbox: off)`;
  findings.push({
    ok: sandbox || backlog.config.sandbox === 'off',
    weight: 1,
    text: sandbox
      ? 'bubblewrap sandbox available for the agent shell and checks'
      : backlog.config.sandbox === 'off'
        ? 'sandbox: off — checks, the agent shell and command-line agents run unsandboxed'
        : unavailable,
  });

  const models = new Set<string>();
  for (const t of open) for (const r of Object.values(roles)) models.add(r.model ?? t.model ?? backlog.config.model);
  for (const m of models) {
    if (priceOf(m, backlog.config.prices) === null)
      findings.push({
        ok: false,
        weight: 1,
        text: `model ${m} has no price: costs will not be counted (add it under prices:)`,
      });
    const eol = endOfLife(m);
    if (eol !== null) findings.push({ ok: false, weight: 1, text: `model ${m} reaches end of life on ${eol}` });
  }

  // The checks on base, once per distinct command, in a throw-away worktree; cached like a fleet's baseline.
  // With no open task yet (a backlog `init` just wrote), the backlog's own check and setup are tried.
  const checks =
    open.length > 0
      ? open.flatMap((t) => checksOf(t, backlog.config))
      : backlog.config.checks !== undefined && backlog.config.checks.length > 0
        ? backlog.config.checks
        : backlog.config.check === null
          ? []
          : [singleCheck(backlog.config.check)];
  const setup = backlog.config.setup;
  if (checks.length > 0) {
    const commit = (await git.revParse(base)) ?? base;
    const workspace = new FsWorkspace(repo.workDir);
    const envFor = (dir: string) =>
      taskEnv(env, {
        taskId: 'audit',
        worktree: dir,
        branch: base,
        base,
        gitRoot: repo.root,
        port: backlog.config.ports.from,
        passed: backlog.config.env,
      });
    let setupRun: { exitCode: number | null; timedOut: boolean; output: string } | null = null;
    const baseline = await baselinesFor(checks, commit, 'audit', {
      store: new JsonBaselineStore(baselinesPath(repo)),
      scratch: new GitScratchTrees(git),
      prepare: async (dir) => {
        await workspace.prepare(repo.root, dir);
        // Setup runs outside the sandbox on base, as a fleet's does, before the checks it prepares for.
        if (setup !== null)
          setupRun = await runner.run(setup, {
            cwd: dir,
            env: envFor(dir),
            timeoutMs: backlog.config.setupTimeoutMs,
            sandbox: null,
          });
      },
      run: async (dir, command) => {
        const r = await runner.run(command, {
          cwd: dir,
          env: envFor(dir),
          timeoutMs: backlog.config.checkTimeoutMs,
          sandbox: sandbox ? { writable: [dir] } : null,
        });
        return {
          command,
          exitCode: r.exitCode,
          timedOut: r.timedOut,
          outputTail: r.output.slice(-8000),
          durationMs: r.durationMs,
          counts: parseTestCounts(r.output),
        };
      },
    });
    if (setup !== null) findings.push(setupFinding(setup, base, setupRun));
    for (const b of baseline) {
      const using = open.filter((t) => checksOf(t, backlog.config).some((c) => c.run === b.command));
      const users = open.length > 0 ? using.map((t) => t.id).join(', ') : "the backlog's check";
      const shared = using.filter((t) => !ownChecks(t)).map((t) => t.id);
      const counts =
        b.counts === null
          ? ''
          : `${b.counts.failed} failing test${b.counts.failed === 1 ? '' : 's'} of ${b.counts.total}`;
      findings.push({
        ok: true,
        weight: 0,
        text:
          !b.timedOut && b.exitCode === 0
            ? `\`${b.command}\` passes on ${base} (${users})${counts === '' ? '' : ` — ${counts}`}`
            : `\`${b.command}\` fails on ${base} already (${users})${counts === '' ? '' : `: ${counts}`}` +
              (shared.length > 0 && b.counts !== null
                ? `; ${shared.join(', ')} (the shared check) judged by not making it worse`
                : '') +
              ' — fine if the task is to make it pass, otherwise fix base first',
      });
    }
  }

  const ceiling = backlogCeiling({ ...backlog, tasks: runnableTasks(backlog) }, (t) =>
    Object.values(roles).map((r) => r.model ?? t.model ?? backlog.config.model),
  );
  const total = findings.reduce((s, f) => s + f.weight, 0);
  const score = total === 0 ? 100 : Math.round((100 * findings.reduce((s, f) => s + (f.ok ? f.weight : 0), 0)) / total);
  const ready = findings.every((f) => f.ok);
  out(`loopfleet audit — ${repo.root} (base ${base}, ${open.length} open task(s))`);
  for (const f of findings) out(`  ${f.weight === 0 ? '·' : f.ok ? '✔' : '✗'} ${f.text}`);
  out('');
  for (const line of ceilingLines(ceiling)) out(line);
  out('');
  out(`Readiness: ${score}/100 — ${ready ? 'ready' : 'not ready: fix the ✗ lines above'}`);
  return ready ? 0 : 1;
}
