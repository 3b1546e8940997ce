import { scanGitConfig } from '../adapters/git/config-scan.js';
import { access, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { CliAgentClient } from '../adapters/model/cli-agent.js';
import { fsTextFiles } from '../adapters/store/file-store.js';
import { processLimit } from '../adapters/sandbox/pids.js';
import { ExecaRunner } from '../adapters/sandbox/execa-runner.js';
import { SimpleGitAdapter } from '../adapters/git/simple-git.js';
import { invisibleProgram } from '../adapters/sandbox/visible.js';
import { packageManagerOf, probeRegistry, registryOf } from '../adapters/egress/setup-probe.js';
import { hostSandboxCause } from '../adapters/sandbox/userns-diagnosis.js';
import type { SandboxCause } from '../domain/sandbox-cause.js';
import { parseHost } from '../adapters/egress/proxy.js';
import { personEnv } from '../core/attempt/task-env.js';
import { presetOf, type AgentPreset } from '../adapters/model/agent-presets/index.js';
import { endpointOf, resolveBin } from '../adapters/model/agent-presets/launch.js';
import { loadRoles, type RoleDefinition } from '../core/roles/definitions.js';
import { systemPrompt } from '../core/roles/prompts.js';
import { isSecretName } from '../core/attempt/task-env.js';
import { ROLES, type Backlog, type FleetConfig, type Role } from '../domain/types.js';
import { forgeChecks } from './doctor-forge.js';
import { trackerChecks } from './doctor-tracker.js';
import { formatTokens } from '../core/text/format-units.js';
import { loadBacklog, type Repo } from './repo.js';

/**
 * `loopfleet doctor`: for every role as configured, whether it will work tonight — the backend installed
 * (its version), logged in or keyed, reachable from inside the sandbox with one minimal call, and the
 * implementer able to write a file (in a throw-away repository, never the user's). One line per check;
 * exit 0 when all hold, 1 otherwise. A preset's minimal call is a real model call: a few thousand tokens.
 */

const PACKAGE_ROOT = new URL('../../', import.meta.url).pathname;
const DOCTOR_FILE = 'loopfleet-doctor.txt';
const CALL_TIMEOUT_MS = 120_000;

interface Check {
  ok: boolean;
  role: Role | 'fleet';
  what: string;
  detail: string;
}

async function exists(p: string): Promise<boolean> {
  try {
    await access(p);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

async function version(bin: string, env: Record<string, string>): Promise<string | null> {
  const quoted = `'${bin.replace(/'/g, `'\\''`)}'`;
  const r = await new ExecaRunner().run(`${quoted} --version 2>/dev/null`, {
    cwd: os.tmpdir(),
    env,
    timeoutMs: 15_000,
  });
  const first = r.output.trim().split('\n')[0] ?? '';
  return r.exitCode === 0 && first !== '' ? first : null;
}

/** Which credential the preset would use, or null. Names only: a value is never printed. */
async function loginOf(preset: AgentPreset, env: NodeJS.ProcessEnv): Promise<string | null> {
  const key = preset.keyEnv.find((n) => (env[n] ?? '') !== '');
  if (key !== undefined) return key;
  const home = env.HOME;
  if (home === undefined) return null;
  for (const f of preset.loginFiles) if (await exists(path.join(home, f))) return `~/${f}`;
  return null;
}

async function throwAwayRepo(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'loopfleet-doctor-'));
  await writeFile(path.join(dir, 'README.md'), 'a throw-away repository of loopfleet doctor\n');
  await SimpleGitAdapter.createRepository(dir, 'main', 'doctor');
  return dir;
}

async function checkPreset(
  role: Role,
  def: RoleDefinition,
  config: FleetConfig,
  env: NodeJS.ProcessEnv,
  sandboxed: boolean,
): Promise<Check[]> {
  const preset = presetOf(def.agent!);
  const checks: Check[] = [];
  const base = { PATH: env.PATH ?? '/usr/bin:/bin', ...(env.HOME ? { HOME: env.HOME } : {}) };
  let bin: string;
  try {
    bin = await resolveBin(preset, def.bin, env, role);
  } catch (error) {
    return [{ ok: false, role, what: 'installed', detail: (error as Error).message }];
  }
  const v = await version(bin, base);
  checks.push({
    ok: v !== null,
    role,
    what: 'installed',
    detail: v === null ? `${bin} --version failed` : `${preset.name} ${v} (${bin})`,
  });
  const login = await loginOf(preset, env);
  checks.push({
    ok: login !== null,
    role,
    what: 'logged in',
    detail:
      login === null
        ? `no ${preset.keyEnv.join(' / ')} and no login in ~/${preset.loginFiles[0]}: ${preset.loginHint}`
        : `by ${login}`,
  });
  if (v === null || login === null) return checks;

  const dir = await throwAwayRepo();
  try {
    const write = role === 'implementer';
    const taskEnvironment = Object.fromEntries(
      Object.entries(env).filter(([k, val]) => val !== undefined && !isSecretName(k)),
    ) as Record<string, string>;
    const client = new CliAgentClient({ processRunner: new ExecaRunner(), sandboxAvailable: sandboxed, hostEnv: env });
    let tokens = 0;
    let model = def.model ?? config.model;
    const endpoint = endpointOf(preset, env);
    const where = `${endpoint.host}:${endpoint.port}${sandboxed ? ' from inside the sandbox' : ' (no sandbox)'}`;
    try {
      await client.runAgent(
        {
          role,
          model,
          system: systemPrompt(
            role,
            'You are being health-checked by loopfleet. Do exactly what the user asks, nothing else.',
          ),
          prompt: write
            ? `Create the file ${DOCTOR_FILE} in the current folder containing the word ok, then reply OK.`
            : 'Reply with the word OK.',
          workdir: dir,
          access: write ? 'write' : 'read-only',
          shell: false,
          env: taskEnvironment,
          maxTurns: 4,
          maxTokens: 1024,
          signal: new AbortController().signal,
          beforeCall: () => {},
          agent: { preset: preset.name, ...(def.bin ? { bin: def.bin } : {}), network: config.network ?? [] },
          timeoutMs: CALL_TIMEOUT_MS,
        },
        (e) => {
          if (e.type !== 'usage') return;
          tokens += e.usage.input + e.usage.output + e.usage.cacheRead + e.usage.cacheWrite;
          if (e.model) model = e.model;
        },
      );
      checks.push({
        ok: true,
        role,
        what: 'reachable',
        detail: `${where}, model ${model}, ${formatTokens(tokens)} tokens`,
      });
    } catch (error) {
      checks.push({
        ok: false,
        role,
        what: 'reachable',
        detail: `${where}: ${(error as Error).message.split('\n')[0]}`,
      });
      return checks;
    }
    if (write) {
      const wrote = await readFile(path.join(dir, DOCTOR_FILE), 'utf8').then(
        (t) => t.trim().toLowerCase().includes('ok'),
        () => false,
      );
      checks.push({
        ok: wrote,
        role,
        what: 'can write',
        detail: wrote
          ? `wrote ${DOCTOR_FILE} in a throw-away repository`
          : `${DOCTOR_FILE} was not written: its permissions do not let it edit`,
      });
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return checks;
}

/** A `command:` agent: its program must be one the sandbox can see (the CLI itself is not called). */
async function checkCommand(
  role: Role,
  command: string,
  env: NodeJS.ProcessEnv,
  sandboxed: boolean,
  root: string,
): Promise<Check> {
  const pathOnly = { PATH: env.PATH ?? '/usr/bin:/bin', ...(env.HOME ? { HOME: env.HOME } : {}) };
  const problem = sandboxed
    ? await invisibleProgram(command, pathOnly, root, `the ${role}'s command \`${command}\``)
    : null;
  return problem === null
    ? {
        ok: true,
        role,
        what: 'backend',
        detail: `command: ${command}${sandboxed ? ' (its program is visible in the sandbox; the CLI itself is not called)' : ' (not checked: any CLI)'}`,
      }
    : { ok: false, role, what: 'backend', detail: problem };
}

/**
 * Setup's network, for each distinct setup that names a package manager: the registry the person's own
 * configuration gives it, reachable (through their proxy) and its TLS trusted with their CA settings.
 */
async function checkSetupNetwork(backlog: Backlog, env: NodeJS.ProcessEnv, root: string): Promise<Check[]> {
  const setups = [
    ...new Set(
      [backlog.config.setup, ...backlog.tasks.map((t) => t.setup)].filter((s): s is string => typeof s === 'string'),
    ),
  ];
  const person = personEnv(env, {
    taskId: 'doctor',
    worktree: root,
    branch: 'doctor',
    base: 'doctor',
    gitRoot: root,
    port: 0,
  });
  const checks: Check[] = [];
  const seen = new Set<string>();
  for (const setup of setups) {
    const manager = packageManagerOf(setup);
    if (manager === null) continue;
    const registry = await registryOf(manager, person, root, new ExecaRunner());
    if (seen.has(`${manager} ${registry}`)) continue;
    seen.add(`${manager} ${registry}`);
    const found = await probeRegistry(manager, registry, person);
    const what = 'setup network';
    const name = `${manager} registry ${registry}`;
    if (found.kind === 'unreachable')
      checks.push({
        ok: false,
        role: 'fleet',
        what,
        detail: `${name} (for \`${setup}\`) is unreachable: ${found.detail}`,
      });
    else if (found.kind === 'untrusted')
      checks.push({
        ok: false,
        role: 'fleet',
        what,
        detail: `${name} (for \`${setup}\`): TLS untrusted (${found.detail}); ${found.fix}`,
      });
    else {
      // In the sandbox (after an agent's work landed on base) setup reaches only the `network:` hosts.
      const { host, port } = parseHost(registry);
      const listed = (backlog.config.network ?? []).some((h) => {
        const a = parseHost(h);
        return a.host === host && a.port === port;
      });
      const sandboxNote = listed
        ? ''
        : `; not under network:, so a setup in the sandbox cannot reach it (add ${host}${port === 443 ? '' : `:${port}`})`;
      checks.push({
        ok: true,
        role: 'fleet',
        what,
        detail: `${name} reachable${found.via === null ? '' : ` through ${found.via}`}, TLS trusted${sandboxNote}`,
      });
    }
  }
  return checks;
}

function checkApi(role: Role, def: RoleDefinition, env: NodeJS.ProcessEnv): Check {
  const key = ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN'].find((n) => (env[n] ?? '') !== '');
  return key !== undefined
    ? {
        ok: true,
        role,
        what: 'keyed',
        detail: `Messages API by ${key}${env.ANTHROPIC_BASE_URL ? ` at ${env.ANTHROPIC_BASE_URL}` : ''}`,
      }
    : {
        ok: false,
        role,
        what: 'keyed',
        detail:
          'the Messages API needs ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN); or set agent: in agents/' + role + '.md',
      };
}

export interface DoctorOptions {
  /** what stops the sandbox here, null when it runs; default: this host's runner and its diagnosis */
  sandboxCause?: () => Promise<SandboxCause | null>;
}

/** A runner that cannot sandbox while the diagnosis's own probe passes is still named, without a cause. */
const UNEXPLAINED: SandboxCause = {
  kind: 'unknown',
  message: "bubblewrap's probe fails for the runner",
  fix: 'install a current bubblewrap',
};

async function hostCause(): Promise<SandboxCause | null> {
  if (await new ExecaRunner().sandboxAvailable()) return null;
  return (await hostSandboxCause()) ?? UNEXPLAINED;
}

function sandboxProblem(cause: SandboxCause): string {
  const said = cause.detail === undefined || cause.message.includes(cause.detail) ? '' : ` (${cause.detail})`;
  return `bubblewrap cannot run here: ${cause.message}${said}. Fix: ${cause.fix}; or set sandbox: off`;
}

export async function doctor(
  repo: Repo,
  env: NodeJS.ProcessEnv,
  out: (line: string) => void,
  options: DoctorOptions = {},
): Promise<number> {
  const backlog = await loadBacklog(repo, false);
  const roles = await loadRoles(fsTextFiles, path.join(PACKAGE_ROOT, 'agents'), repo.root);
  const config = backlog.config;
  const cause = await (options.sandboxCause ?? hostCause)();
  const bwrap = cause === null;
  const sandboxed = bwrap && config.sandbox !== 'off';
  const checks: Check[] = [
    {
      ok: bwrap || config.sandbox === 'off',
      role: 'fleet',
      what: 'sandbox',
      detail: cause === null ? (sandboxed ? 'bubblewrap works' : 'off (sandbox: off)') : sandboxProblem(cause),
    },
  ];
  // Not a failure: the sandbox still confines what it can; the person learns that a fork bomb is not bounded.
  if (sandboxed) checks.push({ ok: true, role: 'fleet', what: 'processes', detail: await processLimit() });
  checks.push(...(await checkSetupNetwork(backlog, env, repo.root)));
  checks.push(...(await forgeChecks(config, { git: new SimpleGitAdapter(repo.root), env })));
  checks.push(...(await trackerChecks(config, { git: new SimpleGitAdapter(repo.root), env })));
  for (const role of ROLES) {
    if (role === 'verifier' && !config.review) continue;
    const def = roles[role];
    if (def.agent !== undefined) checks.push(...(await checkPreset(role, def, config, env, sandboxed)));
    else if (def.command !== undefined) checks.push(await checkCommand(role, def.command, env, sandboxed, repo.root));
    else checks.push(checkApi(role, def, env));
  }
  for (const c of checks) out(`${c.ok ? 'ok  ' : 'FAIL'} ${c.role}: ${c.what}: ${c.detail}`);
  for (const warning of (await scanGitConfig(repo.root)).warnings) out(`warn fleet: ${warning}`);
  return checks.every((c) => c.ok) ? 0 : 1;
}
