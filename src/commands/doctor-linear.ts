import { LinearTracker } from '../adapters/tracker/linear-tracker.js';
import type { TrackerSetting } from '../domain/tracker-setting.js';

/**
 * doctor's tracker section for Linear: the key (LINEAR_API_KEY, accepted: `viewer` answers), the team, the
 * label (a workspace label or the team's), and every workflow state `states:` names. Never prints the key.
 */
export async function linearChecks(
  setting: TrackerSetting,
  env: Record<string, string | undefined>,
  tuning: { msPerSecond?: number } = {},
  check: (ok: boolean, what: string, detail: string) => void,
): Promise<void> {
  const key = (env.LINEAR_API_KEY ?? '').trim();
  if (key === '') {
    check(false, 'tracker', 'tracker: linear needs LINEAR_API_KEY (a personal API key of Linear, Settings → API)');
    return;
  }
  const port = new LinearTracker(
    { team: setting.team ?? '', ...(setting.states === undefined ? {} : { states: setting.states }) },
    {
      key,
      ...(env.LINEAR_API_URL ? { apiUrl: env.LINEAR_API_URL } : {}),
      maxRetries: 1,
      maxWaitSeconds: 10,
      ...tuning,
    },
  );
  try {
    const viewer = await port.viewer();
    const problems = await port.problems();
    const team = problems.some((p) => p.startsWith('Linear has no team')) ? null : await port.team();
    check(
      team !== null,
      'tracker',
      team === null
        ? `LINEAR_API_KEY is accepted (as ${viewer.name}), but Linear has no team with the key ${setting.team}`
        : `Linear issues of ${team.key} (${team.name}) labelled ${setting.label}, as ${viewer.name} (through LINEAR_API_KEY)`,
    );
    if (team === null) return;
    const has = await port.hasLabel(setting.label);
    check(
      has,
      'tracker label',
      has
        ? `${setting.label} exists for ${team.key}`
        : `${team.key} has no label ${setting.label}: create it, then put it on the issues to run`,
    );
    if (setting.states !== undefined)
      check(
        problems.length === 0,
        'tracker states',
        problems.length === 0
          ? `${Object.values(setting.states).join(', ')} are states of ${team.key}`
          : problems.join('; '),
      );
  } catch (error) {
    check(false, 'tracker', `LINEAR_API_KEY: ${(error as Error).message}`);
  }
}
