import { InputError } from '../domain/errors.js';
import type { TrackerSetting } from '../domain/tracker-setting.js';
import { ForgeRateLimitError } from '../ports/forge.js';
import type { TrackerPort } from '../ports/tracker.js';

/**
 * The Linear tracker of a session (`tracker: { type: linear, team }`): LINEAR_API_KEY, and LINEAR_API_URL for a
 * self-hosted or test endpoint. For a run, a missing or refused key, a team Linear does not have and a
 * `states:` name the team lacks are InputErrors at `path` (exit 2, nothing started); a Linear that does not
 * answer is not: the session starts and says the tracker is down ({@link TrackerSession.pass}).
 */
export async function openLinearTracker(
  setting: TrackerSetting,
  path: string,
  env: Record<string, string | undefined>,
  run: boolean,
  options: { msPerSecond?: number; maxRetries?: number; maxWaitSeconds?: number; timeoutMs?: number },
): Promise<TrackerPort | null> {
  const { LinearTracker } = await import('../adapters/tracker/linear-tracker.js');
  const { LinearError } = await import('../adapters/tracker/linear-client.js');
  const key = env.LINEAR_API_KEY ?? '';
  const refuse = (why: string): null => {
    if (run) throw new InputError(path, null, `tracker: linear ${why}`);
    return null;
  };
  if (key.trim() === '') return refuse('needs LINEAR_API_KEY (a personal API key of Linear, Settings → API)');
  const port = new LinearTracker(
    { team: setting.team ?? '', ...(setting.states === undefined ? {} : { states: setting.states }) },
    {
      key: key.trim(),
      ...(env.LINEAR_API_URL ? { apiUrl: env.LINEAR_API_URL } : {}),
      timeoutMs: options.timeoutMs ?? 30_000,
      ...(options.msPerSecond === undefined ? {} : { msPerSecond: options.msPerSecond }),
      ...(options.maxRetries === undefined ? {} : { maxRetries: options.maxRetries }),
      ...(options.maxWaitSeconds === undefined ? {} : { maxWaitSeconds: options.maxWaitSeconds }),
    },
  );
  if (!run) return port;
  try {
    const problems = await port.problems();
    if (problems.length > 0) return refuse(problems.join('; '));
  } catch (error) {
    if (error instanceof LinearError && error.refusedKey)
      return refuse(`could not use LINEAR_API_KEY: ${error.message}`);
    // Linear down or rate limited: the run starts on BACKLOG.md, and its first tracker pass says so.
    if (!(error instanceof LinearError || error instanceof ForgeRateLimitError)) throw error;
  }
  return port;
}
