import type { CiState, CiSummary, FailingCheck } from '../../ports/forge.js';
import { bounded, logTail } from './text.js';
import type { GitLabClient } from './gitlab-client.js';

/**
 * A commit's CI on GitLab: its latest pipeline's state, each failed job (that may not fail) with the end of
 * its log, and failed external commit statuses (a Jenkins posting to the commit) that are no job of it.
 */

const PENDING = new Set([
  'created',
  'waiting_for_resource',
  'preparing',
  'pending',
  'running',
  'scheduled',
  'waiting_for_callback',
]);
const FAILED = new Set(['failed', 'canceled']);
/** Logs fetched per summary: a pipeline with fifty failed jobs gets fifty names, and the first few logs. */
const LOGS_FETCHED = 5;

interface RawPipeline {
  id: number;
  status: string;
  web_url: string;
}

interface RawJob {
  id: number;
  name: string;
  stage: string;
  status: string;
  allow_failure: boolean;
  failure_reason?: string;
  web_url: string;
}

interface RawStatus {
  name: string;
  status: string;
  description: string | null;
  target_url: string | null;
  allow_failure: boolean;
}

export async function gitlabCi(client: GitLabClient, project: string, sha: string): Promise<CiSummary> {
  const { data: pipelines } = await client.request<RawPipeline[]>(
    `reading pipelines of ${sha}`,
    'GET',
    `${project}/pipelines`,
    { query: { sha, order_by: 'id', sort: 'desc', per_page: 1 } },
  );
  const statuses = await client.all<RawStatus>(
    `reading statuses of ${sha}`,
    `${project}/repository/commits/${sha}/statuses`,
  );
  const latest = pipelines[0];
  const failing: FailingCheck[] = [];
  let state: CiState = latest === undefined ? 'none' : stateOf(latest.status);
  const jobNames = new Set<string>();
  if (latest !== undefined) {
    const jobs = await client.all<RawJob>(
      `reading jobs of pipeline ${latest.id}`,
      `${project}/pipelines/${latest.id}/jobs`,
    );
    for (const job of jobs) jobNames.add(job.name);
    let logs = 0;
    for (const job of jobs) {
      if (!FAILED.has(job.status) || job.allow_failure) continue;
      const log =
        logs++ < LOGS_FETCHED
          ? await client.request<string>(`reading the log of job ${job.id}`, 'GET', `${project}/jobs/${job.id}/trace`, {
              text: true,
              accept: [403, 404],
            })
          : null;
      failing.push({
        name: job.name,
        summary: bounded(`${job.stage}: ${job.failure_reason ?? job.status}`),
        logExcerpt: log?.status === 200 ? logTail(stripAnsi(log.data)) : null,
        url: job.web_url,
      });
    }
  }
  for (const s of statuses) {
    if (jobNames.has(s.name) || s.allow_failure) continue;
    if (FAILED.has(s.status)) {
      failing.push({
        name: s.name,
        summary: bounded(s.description ?? `${s.name}: ${s.status}`),
        logExcerpt: null,
        url: s.target_url,
      });
      state = 'failing';
    } else if (PENDING.has(s.status) && state !== 'failing') state = 'pending';
    else if (s.status === 'success' && state === 'none') state = 'passing';
  }
  if (failing.length > 0) state = 'failing';
  return { state, failing };
}

function stateOf(status: string): CiState {
  if (PENDING.has(status)) return 'pending';
  if (FAILED.has(status)) return 'failing';
  if (status === 'success' || status === 'skipped' || status === 'manual') return 'passing';
  return 'none';
}

/** Job logs carry terminal colours and GitLab's section markers; the excerpt is for reading. */
function stripAnsi(text: string): string {
  return text
    .replace(/\u001b\[[0-9;]*[A-Za-z]|\u001b\]|section_(start|end):\d+:[a-z0-9_]+\r?/gi, '')
    .replace(/\r(?!\n)/g, '\n');
}
