// First: React's build is chosen when it is loaded (see `restoreNodeEnv`).
import { restoreNodeEnv } from './production-react.js';
import { readFileSync, realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join, resolve } from 'node:path';
import { type ParseArgsOptionsConfig, parseArgs } from 'node:util';
import { InputError, InputErrors, ResourceLimitError, UsageError } from './domain/errors.js';
import { parseDuration, parseSize, parseUsd } from './core/text/parse-units.js';
import { findRepo } from './commands/repo.js';
import type { Overrides } from './commands/session.js';
import type { ExchangesOption } from './commands/exchanges.js';
import type { DiscoverOptions } from './commands/discover.js';
import { parseOnly } from './core/discover/options.js';
import { DISCOVER_SOURCES } from './domain/types.js';
import { statusRows, statusTable } from './commands/status.js';
import { statusSummary, summaryLine } from './commands/status-summary.js';
import { jsonText, visible } from './domain/sanitize.js';
import { parseUntil } from './commands/until.js';
import { parseSince } from './commands/since.js';

// Commands are imported when they run: `status` must not pay for loading Ink, React and the SDK.
const PACKAGE_ROOT = fileURLToPath(new URL('../', import.meta.url));

export const HELP = `loopfleet — run a fleet of coding agents over a repository's backlog

Usage:
  loopfleet                     interactive view of the fleet (needs a terminal)
  loopfleet --overnight         headless: run the whole backlog, write a report, exit
  loopfleet --watch [--until HH:MM[:SS]]
                                headless and kept alive: runs recurring tasks (every:) when due, picks up
                                BACKLOG.md edits, runs discover on the front matter's discover: setting;
                                stops on SIGINT/SIGTERM, a fleet gate or --until (local time), then reports
  loopfleet init                write BACKLOG.md (check: and setup: from what the project declares) and
                                agents/README.md, ignore .loop-worktrees/
  loopfleet status [--json]     state of every task, in backlog order
  loopfleet status --summary [--json]
                                the fleet in figures: counts, tokens, cost, cost per verified and per
                                merged task
  loopfleet merge <id>          merge a verified task's branch into base (the TUI's m)
  loopfleet merge --all         the merge queue: every verified task in backlog order, each rebased onto
                                the last merge and checked again before it lands (the TUI's M)
  loopfleet discard <id>        remove a task's worktree and branch, keeping a recoverable ref (d)
  loopfleet retry <id>          queue a failed, conflict or discarded task again (r)
  loopfleet approve <id>        approve the plan of a task awaiting approval; it runs next time (a)
  loopfleet prune               remove worktrees a crash or a manual deletion left behind
  loopfleet sync                read every open pull request once (land: pr): merged, closed, red CI and
                                review comments drive their tasks; branches behind base are rebased
  loopfleet audit               check readiness (setup and checks once on base) and print the cost ceiling
  loopfleet discover            propose tasks under ## Discovered in BACKLOG.md (TODOs, failing tests,
                                lint errors, outdated or vulnerable dependencies, labelled GitHub or GitLab issues)
  loopfleet doctor              check each role's agent (installed, logged in, reachable, can write), the
                                sandbox's process limit, setup's network, git settings turned off, and
                                the forge (land: pr or forge:): remote, token, scopes, branch protection
  loopfleet eval [--range A..B | --since 90d | --from FILE] [--limit N] [--config NAME=DIR ...]
                 [--max-cost USD] [--dry-run] [--json]
                                the eval tasks of this repository's history: commits whose tests fail at
                                their parent and pass at the commit, the rest of the suite still passing
                                (the check runs at both, sandboxed); every candidate and why it was kept
                                or dropped goes to .loop-worktrees/evals/<timestamp>/candidates.json. Then
                                each task runs under each configuration (the normal pipeline, its tests
                                hidden from the agents): verified share with its 95 % interval, cost per
                                verified task, time, attempts, vetoes, in report.md, result.json, chart.svg
  loopfleet demo                the whole system on a sample repository with a scripted model
  loopfleet mcp                 an MCP server over stdio for coding agents (Claude Code, Codex, Gemini CLI):
                                list and read tasks, add one to BACKLOG.md, retry; merge or discard only
                                under autonomy: auto
  loopfleet serve [--port N] [--host ADDR] [--read-only]
                                the fleet as the interactive view runs it, with a web page and its JSON/SSE
                                API instead (docs/web-and-api.md); prints the URL with its token once;
                                stops on SIGINT/SIGTERM, then reports
  loopfleet worker --queue URL --remote URL [--env NAME]... [--allow-host-setup] [--concurrency N]
                   [--cache DIR] [--grace T] [--lock-timeout T] [--queue-secret-file PATH]
                                on any machine with git, bubblewrap and model credentials: take attempts
                                of a fleet run with --queue URL and run them here; SIGTERM stops it

Options (the run commands):
  --concurrency N               pipelines at once (overrides the front matter); worker: attempts at once
                                on this machine (default 1)
  --max-tokens N                fleet token gate, e.g. 5M
  --max-cost USD                fleet cost gate in dollars; eval: what the whole eval may spend
  --max-time T                  fleet wall-clock gate, e.g. 8h
  --auto-merge                  land each verified task through the merge queue (rebased, checked again)
  --no-wait                     on a usage or rate limit, fail the task and end the run (exit 1)
                                instead of pausing the fleet until the limit resets
  --until HH:MM[:SS]            --watch: stop at this local time (the next time the clock reads it)
  --record DIR                  --overnight: keep every model exchange of the run in DIR (new or empty)
  --replay DIR                  --overnight: the same run with no model: the exchanges come from DIR
                                (a recorded run's); no credentials needed, nothing spent
  --queue redis://HOST:PORT[/DB][?name=NAME]
                                run attempts on workers fed through this Redis (the interactive view,
                                --overnight, --watch, worker); the git remote (remote:, default origin)
                                carries the code; rediss:// for TLS, redis://:PASSWORD@HOST for a
                                password (never printed; required, or TLS, for a Redis off this machine)
  --queue-secret-file PATH      the fleet secret (one per line, the current one first), given to the
                                coordinator and every worker out of band; else LOOPFLEET_QUEUE_SECRET.
                                Required with --queue: it signs every job, control message and event
  --remote URL                  worker: the git remote it fetches from and pushes to (repeatable); a job
                                naming another remote is refused
  --env NAME                    worker: a variable of its environment a job's env: may pass (repeatable);
                                never OTEL_*, model keys, tokens or database URLs
  --allow-host-setup            worker: run setup outside the sandbox when the coordinator's signed job
                                says base holds only the person's commits (default: always sandboxed)
  --cache DIR                   worker: its repository cache (default ~/.cache/loopfleet/repos)
  --grace T                     worker: after SIGTERM, how long running attempts may finish before they
                                are handed back to other workers (default 10m)
  --lock-timeout T              worker: a job whose worker stopped answering for T goes to another (30s)
  --port N                      serve: the TCP port (default 7420; 0: any free port, the URL says which)
  --host ADDR                   serve: the address to listen on (default 127.0.0.1); beyond loopback it
                                says what that risks
  --read-only                   serve: the page and API only read; every action (POST) is refused
  --no-color                    no colours in the interactive view (NO_COLOR works too)
  --dry-run                     discover: print the proposals, leave BACKLOG.md as it is; eval: find the
                                tasks, run none
  --limit N                     discover: add at most N proposals, highest priority first; eval: look
                                at the N newest commits of the range (default 50)
  --range A..B                  eval: the commits of this range (git's A..B)
  --since T                     eval: the commits of HEAD since 90d, 12w or a date (default 90d)
  --from FILE                   eval: the tasks of a candidates.json (an earlier eval's, edited) instead
                                of mining history again
  --config NAME=DIR             eval: a configuration to run the tasks under (repeatable): DIR's agents/*.md
                                and BACKLOG.md front matter over the repository's (default: its own setup)
  --only LIST                   discover: only these finders, e.g. todo,tests (todo, tests, lint, deps, issues)
  --github-label L              discover: the label of the issues to propose, on GitHub or GitLab (default loopfleet)
  -h, --help                    this help
  -v, --version                 the version

Environment:
  ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN   credentials for the Messages API
  ANTHROPIC_BASE_URL                          any Anthropic-compatible endpoint (root URL, no /v1)
  OTEL_EXPORTER_OTLP_ENDPOINT                 send traces and metrics over OTLP/HTTP (and the other OTEL_* variables)
  LOOPFLEET_QUEUE_SECRET                      the fleet secret of --queue (several, comma-separated: the current first)
  LOOPFLEET_SERVE_TOKEN                       serve: the token (at least 16 characters) instead of a new one per start
  LOOPFLEET_SERVE_ORIGIN                      serve: the origin a TLS reverse proxy serves the page at

Exit codes: 0 no task the run touched ended failed or in conflict; 1 one did, or a fleet gate, a full
disk, a system limit or a deleted BACKLOG.md stopped the run (audit: not ready; doctor: a check failed;
merge: refused); 2 bad usage or bad input (nothing started or written); 130 interrupted.
`;

/** The commands `loopfleet <command>` accepts; without one, `loopfleet` runs the fleet itself. */
export const COMMANDS = [
  'init',
  'status',
  'merge',
  'discard',
  'retry',
  'approve',
  'prune',
  'audit',
  'doctor',
  'demo',
  'eval',
  'discover',
  'sync',
  'worker',
  'mcp',
  'serve',
] as const;
const COMMAND_NAMES: ReadonlySet<string> = new Set(COMMANDS);
const WORKER_OPTIONS = ['cache', 'grace', 'lock-timeout', 'remote', 'env', 'allow-host-setup'] as const;
const DISCOVER_OPTIONS = ['only', 'github-label'] as const;
const SERVE_OPTIONS = ['port', 'host', 'read-only'] as const;
const EVAL_OPTIONS = ['range', 'since', 'config', 'from'] as const;

/** Every option the command line accepts, as `parseArgs` reads them; which command takes which is checked below. */
export const CLI_OPTIONS = {
  overnight: { type: 'boolean' },
  watch: { type: 'boolean' },
  until: { type: 'string' },
  json: { type: 'boolean' },
  summary: { type: 'boolean' },
  concurrency: { type: 'string' },
  'max-tokens': { type: 'string' },
  'max-cost': { type: 'string' },
  'max-time': { type: 'string' },
  'auto-merge': { type: 'boolean' },
  'no-wait': { type: 'boolean' },
  record: { type: 'string' },
  replay: { type: 'string' },
  'no-color': { type: 'boolean' },
  'dry-run': { type: 'boolean' },
  all: { type: 'boolean' },
  limit: { type: 'string' },
  range: { type: 'string' },
  since: { type: 'string' },
  config: { type: 'string', multiple: true },
  from: { type: 'string' },
  only: { type: 'string' },
  'github-label': { type: 'string' },
  queue: { type: 'string' },
  cache: { type: 'string' },
  grace: { type: 'string' },
  'lock-timeout': { type: 'string' },
  'queue-secret-file': { type: 'string' },
  remote: { type: 'string', multiple: true },
  env: { type: 'string', multiple: true },
  'allow-host-setup': { type: 'boolean' },
  port: { type: 'string' },
  host: { type: 'string' },
  'read-only': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} as const satisfies ParseArgsOptionsConfig;

function version(): string {
  return (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
}

function option<T>(
  name: string,
  raw: string | undefined,
  parse: (text: string) => { ok: true; value: T } | { ok: false; message: string },
): T | undefined {
  if (raw === undefined) return undefined;
  const result = parse(raw);
  if (!result.ok) throw new UsageError(`--${name}: ${result.message}`);
  return result.value;
}

function portNumber(text: string): { ok: true; value: number } | { ok: false; message: string } {
  return /^\d{1,5}$/.test(text) && Number(text) <= 65535
    ? { ok: true, value: Number(text) }
    : { ok: false, message: `'${text}' is not a port (0 to 65535; 0: any free port)` };
}

function positiveInt(text: string): { ok: true; value: number } | { ok: false; message: string } {
  return /^[1-9]\d*$/.test(text)
    ? { ok: true, value: Number(text) }
    : { ok: false, message: `'${text}' is not a positive whole number` };
}

/**
 * Everything the CLI prints passes the one sanitiser on its way to the terminal (loopfleet's own stdout has
 * no colours to keep): what a command quotes from agents, checks or git cannot move the cursor, set the
 * title or write the clipboard. Commands that print agent text also clean it field by field (status,
 * the headless lines), so a one-line field stays one line.
 */
function stdoutLine(line: string): void {
  process.stdout.write(`${visible(line)}\n`);
}

function stderrLine(line: string): void {
  process.stderr.write(`${visible(line)}\n`);
}

/** `--record DIR` / `--replay DIR`: one of them, with `loopfleet --overnight` only. */
function exchangesOption(
  record: string | undefined,
  replay: string | undefined,
  overnight: boolean,
): ExchangesOption | undefined {
  if (record === undefined && replay === undefined) return undefined;
  const mode = record !== undefined ? 'record' : 'replay';
  if (record !== undefined && replay !== undefined) throw new UsageError('--record and --replay: choose one');
  if (!overnight) throw new UsageError(`--${mode} is an option of \`loopfleet --overnight\` only`);
  const dir = (record ?? replay)!;
  if (dir.trim() === '') throw new UsageError(`--${mode} needs a folder`);
  return { mode, dir };
}

export async function main(argv: string[], out: (line: string) => void = stdoutLine): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: CLI_OPTIONS,
    });
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\nRun \`loopfleet --help\` for the usage.`);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    out(HELP);
    return 0;
  }
  if (values.version) {
    out(version());
    return 0;
  }
  const [command, ...rest] = positionals;
  if (command !== undefined && !COMMAND_NAMES.has(command)) {
    throw new UsageError(`unknown command '${command}'. Run \`loopfleet --help\` for the usage.`);
  }
  const overrides: Overrides = {
    concurrency: option('concurrency', values.concurrency, positiveInt),
    fleetGates: {
      tokens: option('max-tokens', values['max-tokens'], parseSize),
      costUsd: option('max-cost', values['max-cost'], parseUsd),
      timeMs: option('max-time', values['max-time'], parseDuration),
    },
  };
  const color = !values['no-color'] && !process.env.NO_COLOR;
  const mergeAll = command === 'merge' && values.all === true;
  if (values.all === true && command !== 'merge') throw new UsageError('--all is an option of `loopfleet merge` only');
  if (mergeAll && rest.length > 0)
    throw new UsageError('loopfleet merge --all takes no task id: it merges every verified task, in backlog order');
  const needsId =
    (command === 'merge' && !mergeAll) || command === 'discard' || command === 'retry' || command === 'approve';
  if (needsId && rest.length !== 1)
    throw new UsageError(`loopfleet ${command} takes one task id, e.g. loopfleet ${command} T-3`);
  if (!needsId && rest.length > 0)
    throw new UsageError(`unexpected argument '${rest[0]}'. Run \`loopfleet --help\` for the usage.`);
  if (values.overnight && command !== undefined && command !== 'demo') {
    throw new UsageError(`--overnight is not an option of \`loopfleet ${command}\``);
  }

  if (values.watch && command !== undefined)
    throw new UsageError(`--watch is not an option of \`loopfleet ${command}\``);
  if (values.watch && values.overnight) throw new UsageError('--watch and --overnight are two ways to run: choose one');
  if (values.until !== undefined && !values.watch)
    throw new UsageError('--until is an option of `loopfleet --watch` only');
  const until = option('until', values.until, parseUntil) ?? null;
  if (values.summary === true && command !== 'status')
    throw new UsageError('--summary is an option of `loopfleet status` only');
  const exchanges = exchangesOption(values.record, values.replay, values.overnight === true && command === undefined);

  const stray = DISCOVER_OPTIONS.find((o) => values[o] !== undefined);
  if (stray !== undefined && command !== 'discover')
    throw new UsageError(`--${stray} is an option of \`loopfleet discover\` only`);

  if (values['dry-run'] !== undefined && command !== 'discover' && command !== 'eval')
    throw new UsageError('--dry-run is an option of `loopfleet discover` and `loopfleet eval` only');
  if (values.limit !== undefined && command !== 'discover' && command !== 'eval')
    throw new UsageError('--limit is an option of `loopfleet discover` and `loopfleet eval` only');
  const evalStray = EVAL_OPTIONS.find((o) => values[o] !== undefined);
  if (evalStray !== undefined && command !== 'eval')
    throw new UsageError(`--${evalStray} is an option of \`loopfleet eval\` only`);
  if (values.range !== undefined && values.since !== undefined) throw new UsageError('--range and --since: choose one');
  if (
    values.from !== undefined &&
    (values.range !== undefined || values.since !== undefined || values.limit !== undefined)
  )
    throw new UsageError('--from takes the tasks from a file: --range, --since and --limit do not go with it');

  let discoverArgs: Omit<DiscoverOptions, 'env'> | undefined;
  if (command === 'discover') {
    const label = values['github-label'];
    if (label !== undefined && label.trim() === '') throw new UsageError('--github-label needs a label name');
    discoverArgs = {
      dryRun: values['dry-run'] === true,
      limit: option('limit', values.limit, positiveInt) ?? null,
      only: option('only', values.only, parseOnly) ?? new Set(DISCOVER_SOURCES),
      githubLabel: label?.trim() ?? 'loopfleet',
    };
  }

  const serveStray = SERVE_OPTIONS.find((o) => values[o] !== undefined);
  if (serveStray !== undefined && command !== 'serve')
    throw new UsageError(`--${serveStray} is an option of \`loopfleet serve\` only`);
  if (values.host !== undefined && values.host.trim() === '')
    throw new UsageError('--host needs an address, e.g. 127.0.0.1');

  const workerStray = WORKER_OPTIONS.find((o) => values[o] !== undefined);
  if (workerStray !== undefined && command !== 'worker')
    throw new UsageError(`--${workerStray} is an option of \`loopfleet worker\` only`);
  if (values.queue !== undefined && command !== undefined && command !== 'worker' && command !== 'serve')
    throw new UsageError(`--queue is not an option of \`loopfleet ${command}\``);
  if (values['queue-secret-file'] !== undefined && values.queue === undefined)
    throw new UsageError('--queue-secret-file goes with --queue (the coordinator) or `loopfleet worker --queue`');
  const { parseQueueUrl } = await import('./adapters/queue/redis-url.js');
  const { readFleetSecret } = await import('./adapters/queue/fleet-secret.js');
  const { guardQueue } = await import('./adapters/queue/queue-guard.js');
  const queue =
    values.queue === undefined
      ? undefined
      : guardQueue(parseQueueUrl(values.queue), readFleetSecret(process.env, values['queue-secret-file']));
  if (command === 'worker') {
    const fleetOnly = (['max-tokens', 'max-cost', 'max-time', 'auto-merge', 'no-wait'] as const).find(
      (o) => values[o] !== undefined,
    );
    if (fleetOnly !== undefined)
      throw new UsageError(
        `--${fleetOnly} is an option of the coordinator (the fleet run with --queue), not of \`loopfleet worker\``,
      );
    if (queue === undefined)
      throw new UsageError(
        'loopfleet worker needs --queue redis://HOST:PORT[/DB], the Redis of the fleet it works for',
      );
    const remotes = values.remote ?? [];
    if (remotes.length === 0)
      throw new UsageError(
        'loopfleet worker needs --remote URL, the git remote of the fleet it works for: a job naming any other remote is refused',
      );
    const { worker } = await import('./commands/worker.js');
    return worker(
      {
        queue,
        policy: { remotes, env: values.env ?? [], hostSetup: values['allow-host-setup'] === true },
        concurrency: overrides.concurrency ?? 1,
        cache: values.cache ?? null,
        graceMs: option('grace', values.grace, parseDuration) ?? 600_000,
        lockMs: option('lock-timeout', values['lock-timeout'], parseDuration) ?? 30_000,
        env: process.env,
      },
      out,
      stderrLine,
    );
  }

  if (command === 'demo') {
    const { demo } = await import('./commands/demo.js');
    return demo({ headless: values.overnight === true || !process.stdout.isTTY, color, overrides, out });
  }
  const repo = await findRepo(process.cwd());
  const env = process.env;
  switch (command) {
    case 'init':
      return (await import('./commands/init.js')).init(repo, out);
    case 'status': {
      const rows = await statusRows(repo);
      if (values.summary === true) {
        const summary = statusSummary(rows);
        out(values.json ? jsonText(summary, 2) : summaryLine(summary));
      } else out(values.json ? jsonText(rows, 2) : statusTable(rows));
      return 0;
    }
    case 'merge':
      if (mergeAll) return (await import('./commands/manage.js')).mergeAll(repo, env, out);
      return (await import('./commands/manage.js')).manage(repo, command, rest[0]!, env, out);
    case 'discard':
    case 'retry':
    case 'approve':
      return (await import('./commands/manage.js')).manage(repo, command, rest[0]!, env, out);
    case 'prune':
      return (await import('./commands/manage.js')).prune(repo, env, out);
    case 'sync':
      return (await import('./commands/sync.js')).sync(repo, env, out);
    case 'audit':
      return (await import('./commands/audit.js')).audit(repo, env, out);
    case 'discover':
      return (await import('./commands/discover.js')).discover(repo, { ...discoverArgs!, env }, out);
    case 'doctor':
      return (await import('./commands/doctor.js')).doctor(repo, env, out);
    case 'mcp':
      return (await import('./commands/mcp.js')).mcp(repo, env, version());
    case 'serve': {
      const { serve, DEFAULT_HOST, DEFAULT_PORT } = await import('./commands/serve.js');
      return serve(
        repo,
        {
          overrides,
          autoMerge: values['auto-merge'] === true,
          noWait: values['no-wait'] === true,
          watch: true,
          env,
          ...(queue === undefined ? {} : { queue }),
          port: option('port', values.port, portNumber) ?? DEFAULT_PORT,
          host: values.host?.trim() ?? DEFAULT_HOST,
          readOnly: values['read-only'] === true,
        },
        out,
      );
    }
    case 'eval': {
      const range = values.range;
      if (range !== undefined && !/^[^.\s][^\s]*\.\.[^.\s][^\s]*$|^[^.\s][^\s]*\.\.$/.test(range))
        throw new UsageError(`--range: '${range}' is not a range of commits such as v1.2..main`);
      const since = option('since', values.since ?? '90d', (t) => parseSince(t, Date.now()))!;
      const { parseConfigArg } = await import('./commands/eval-configs.js');
      return (await import('./commands/eval.js')).evaluate(
        repo,
        {
          history: range !== undefined ? { range } : { since },
          limit: option('limit', values.limit, positiveInt) ?? 50,
          json: values.json === true,
          env,
          configs: (values.config ?? []).map((raw) => parseConfigArg(raw, process.cwd())),
          maxCostUsd: overrides.fleetGates?.costUsd ?? null,
          dryRun: values['dry-run'] === true,
          from: values.from === undefined ? null : resolve(process.cwd(), values.from),
        },
        out,
      );
    }
    default: {
      const options = {
        overrides,
        autoMerge: values['auto-merge'] === true,
        noWait: values['no-wait'] === true,
        watch: true,
        env,
        ...(queue === undefined ? {} : { queue }),
        ...(exchanges === undefined ? {} : { exchanges }),
      };
      if (exchanges !== undefined && queue !== undefined)
        throw new UsageError(`--${exchanges.mode} runs the attempts here: it does not go with --queue`);
      if (values.watch) return (await import('./commands/watch.js')).watch(repo, { ...options, until }, out);
      if (values.overnight) return (await import('./commands/overnight.js')).overnight(repo, options, out);
      return (await import('./commands/tui.js')).tui(repo, { ...options, color });
    }
  }
}

function report(error: unknown): number {
  if (error instanceof InputErrors) {
    for (const e of error.errors) stderrLine(`loopfleet: ${e.message}`);
    return 2;
  }
  if (error instanceof InputError || error instanceof UsageError) {
    stderrLine(`loopfleet: ${error.message}`);
    return 2;
  }
  if (error instanceof Error && 'exitCode' in error && typeof error.exitCode === 'number') {
    stderrLine(`loopfleet: ${error.message}`);
    return error.exitCode;
  }
  // Out of open files or memory wherever it surfaced (a transcript flushed on the way out): the limit, not a stack.
  const limit = ResourceLimitError.of(error);
  if (limit !== null) {
    stderrLine(`loopfleet: ${limit.message}`);
    return limit.exitCode;
  }
  stderrLine(`loopfleet: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  return 1;
}

function exit(code: number): void {
  process.exitCode = code;
  // Keep-alive sockets or a watcher closing late must not hold the process open once the work is done.
  setTimeout(() => process.exit(code), 1000).unref();
}

/** Runs the command line and sets the exit code; the process ends when the work is done. */
export function runCli(argv: string[]): void {
  restoreNodeEnv();
  main(argv).then(exit, (error: unknown) => exit(report(error)));
}

const invoked = process.argv[1];
if (invoked !== undefined && realpathSync(invoked) === fileURLToPath(import.meta.url)) runCli(process.argv.slice(2));
