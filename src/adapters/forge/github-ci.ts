import { type CiSummary, type FailingCheck, ForgeError } from '../../ports/forge.js';
import { bounded, combinedState, DEFAULT_FORGE_TIMEOUT_MS, EXCERPT_CHARS, logTail } from './text.js';
import type { GitHubOctokit } from './github-client.js';

/**
 * A commit's CI on GitHub: its check runs (latest per name) and its commit statuses, combined. A failing
 * check's excerpt is its own output text; for a GitHub Actions job without one, the end of the job's log.
 * GitHub answers a log request with a redirect to a signed address on another host: it is fetched there
 * without the token (the signature is the credential), at most LOGS_FETCHED logs per summary, and only
 * the log's last bytes are kept.
 */

const FAILED_CONCLUSIONS = new Set([
  'failure',
  'timed_out',
  'cancelled',
  'action_required',
  'startup_failure',
  'stale',
]);
const LOGS_FETCHED = 3;
/** Bytes read from the end of a job's log: a few times what the excerpt keeps, for its line cut. */
const LOG_TAIL_BYTES = EXCERPT_CHARS * 4;
/** How long a log download may take, and what ends it early (the run's signal), as every forge request. */
export interface LogBound {
  timeoutMs?: number;
  signal?: AbortSignal;
}

export type GitHubCaller = <T>(
  what: string,
  call: (octokit: GitHubOctokit, where: { owner: string; repo: string }) => Promise<T>,
) => Promise<T>;

export async function githubCi(call: GitHubCaller, sha: string, bound: LogBound = {}): Promise<CiSummary> {
  const runs = await call(`reading check runs of ${sha}`, (o, where) =>
    o.paginate(o.rest.checks.listForRef, { ...where, ref: sha, per_page: 100, filter: 'latest' }),
  );
  const { data: combined } = await call(`reading the status of ${sha}`, (o, where) =>
    o.rest.repos.getCombinedStatusForRef({ ...where, ref: sha, per_page: 100 }),
  );
  const states: ('passing' | 'failing' | 'pending')[] = [];
  const failing: FailingCheck[] = [];
  let logs = 0;
  for (const run of runs) {
    if (run.status !== 'completed') {
      states.push('pending');
      continue;
    }
    if (!FAILED_CONCLUSIONS.has(run.conclusion ?? '')) {
      states.push('passing');
      continue;
    }
    states.push('failing');
    const summary = [run.output.title, run.output.summary]
      .filter((s): s is string => typeof s === 'string' && s.trim() !== '' && s !== run.name)
      .join(': ');
    let excerpt = logTail(run.output.text ?? null);
    // An Actions check run is the job of the same id.
    if (excerpt === null && run.app?.slug === 'github-actions' && logs++ < LOGS_FETCHED)
      excerpt = logTail(await jobLogTail(call, run.id, bound));
    failing.push({
      name: run.name,
      summary: bounded(summary || `${run.name}: ${run.conclusion}`),
      logExcerpt: excerpt,
      url: run.html_url ?? run.details_url ?? null,
    });
  }
  for (const status of combined.statuses) {
    if (status.state === 'pending') states.push('pending');
    else if (status.state === 'failure' || status.state === 'error') {
      states.push('failing');
      failing.push({
        name: status.context,
        summary: bounded(status.description ?? `${status.context}: ${status.state}`),
        logExcerpt: null,
        url: status.target_url ?? null,
      });
    } else states.push('passing');
  }
  return { state: combinedState(states), failing };
}

/** The end of an Actions job's log, or null when GitHub has none to give (expired, no permission). */
async function jobLogTail(call: GitHubCaller, jobId: number, bound: LogBound): Promise<string | null> {
  let location: string | undefined;
  try {
    const answer = await call(`reading the log of job ${jobId}`, (o, where) =>
      o.rest.actions.downloadJobLogsForWorkflowRun({ ...where, job_id: jobId, request: { redirect: 'manual' } }),
    );
    location = (answer.headers as Record<string, string | undefined>).location;
  } catch (error) {
    // A log that is gone (expired) or forbidden leaves the excerpt empty: the check's name and summary still say what failed.
    if (error instanceof ForgeError && (error.status === 403 || error.status === 404 || error.status === 410))
      return null;
    throw error;
  }
  if (location === undefined || !/^https?:\/\//i.test(location)) return null;
  try {
    const signals = [AbortSignal.timeout(bound.timeoutMs ?? DEFAULT_FORGE_TIMEOUT_MS)];
    if (bound.signal !== undefined) signals.push(bound.signal);
    const response = await fetch(location, { redirect: 'follow', signal: AbortSignal.any(signals) });
    if (!response.ok || response.body === null)
      return `(the job's log could not be read: ${response.status} from its storage)`;
    return await tailOfStream(response.body, LOG_TAIL_BYTES);
  } catch (error) {
    // The signed address is not GitHub's API: its failure is said in the excerpt, not thrown over the whole summary.
    return `(the job's log could not be read: ${error instanceof Error ? error.message : String(error)})`;
  }
}

async function tailOfStream(body: ReadableStream<Uint8Array>, max: number): Promise<string> {
  let kept = Buffer.alloc(0);
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    kept = Buffer.concat([kept, Buffer.from(chunk)]);
    if (kept.length > max * 2) kept = kept.subarray(kept.length - max);
  }
  const tail = kept.length > max ? kept.subarray(kept.length - max) : kept;
  // Actions logs stamp every line with its time; the excerpt is for reading.
  return tail.toString('utf8').replace(/^\d{4}-\d\d-\d\dT[\d:.]+Z /gm, '');
}
