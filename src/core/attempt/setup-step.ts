/**
 * `setup:` in a new worktree — where it runs and with what:
 * - on the person's code (a new branch on a base that holds nothing landed during this run, see
 *   {@link SetupTrust}): outside the sandbox, as the person's own shell would run it — their environment
 *   (HOME, proxies, CA bundles, registry configuration) minus the credentials loopfleet holds;
 * - on anything an agent may have written (a worktree rebuilt from an existing branch, a base that an
 *   agent's work has landed on): in the sandbox, with the allow-listed environment and the network only
 *   through the egress proxy to the `network:` hosts (the person's proxy and CA settings go with it);
 *   without a sandbox it is skipped, saying so.
 * Cloned dependencies (an identical lockfile) make setup unnecessary: skipped, saying so.
 */
import type { CheckResult, FleetConfig, TaskSpec } from '../../domain/types.js';
import { formatDuration } from '../text/format-units.js';

/** Why setup may not run on the host: `said` for the setup output, `short` for a failure's reason. */
export interface Untrusted {
  said: string;
  short: string;
}

export interface SetupWorktree {
  depsCloned: boolean;
  /** null: the person's code, setup runs on the host */
  untrusted: Untrusted | null;
}

export interface SetupRun {
  /** runs the command on the host with the person's environment, or in the sandbox with the network hosts */
  (command: string, place: { sandbox: false } | { sandbox: true; network: string[] }): Promise<CheckResult>;
}

export type SetupOutcome =
  | { kind: 'done'; result: CheckResult | null }
  | { kind: 'failed'; result: CheckResult; reason: string };

export function rebuiltFrom(branch: string, agentCommits: boolean): Untrusted {
  return agentCommits
    ? {
        said: `the worktree was rebuilt from ${branch}, which holds agent-written commits`,
        short: 'the branch holds agent-written commits',
      }
    : { said: `the worktree was rebuilt from ${branch}`, short: 'the worktree was rebuilt from its branch' };
}

export function notVouched(base: string): Untrusted {
  return {
    said: `this worker has not been told, by a job sealed by the coordinator, that ${base} holds only the person's commits (or it does not run setup on its host)`,
    short: 'a worker runs setup on its host only when the coordinator vouches for base',
  };
}

export function landedOn(base: string, commit: string): Untrusted {
  return {
    said: `${base} holds agent-written code that landed during this run (${commit.slice(0, 8)})`,
    short: `${base} holds agent-written code that landed during this run`,
  };
}

export async function runSetup(
  spec: TaskSpec,
  config: FleetConfig,
  worktree: SetupWorktree,
  sandboxed: boolean,
  say: (text: string) => void,
  run: SetupRun,
): Promise<SetupOutcome> {
  const command = spec.setup ?? config.setup;
  if (command == null) return { kind: 'done', result: null };
  const tell = (text: string) => say(`setup \`${command}\` ${text}\n`);
  if (worktree.depsCloned) {
    tell('skipped: the dependencies were cloned from the checkout (identical lockfile)');
    return { kind: 'done', result: null };
  }
  const why = worktree.untrusted;
  if (why !== null && !sandboxed) {
    tell(`skipped: ${why.said}, and there is no sandbox to run it in`);
    return { kind: 'done', result: null };
  }
  if (why !== null) tell(`runs in the sandbox: ${why.said}`);
  const result = await run(
    command,
    why === null ? { sandbox: false } : { sandbox: true, network: config.network ?? [] },
  );
  if (result.exitCode === 0) return { kind: 'done', result };
  const where = why === null ? '' : ` (in the sandbox: ${why.short})`;
  return { kind: 'failed', result, reason: `setup \`${command}\`${where} ${describeExit(result)}` };
}

export function describeExit(r: CheckResult): string {
  if (r.timedOut) return `timed out after ${formatDuration(r.durationMs)}`;
  return r.exitCode === null ? 'was killed' : `exited ${r.exitCode}`;
}
