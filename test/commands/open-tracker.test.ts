import { describe, expect, it } from 'vitest';
import { openTracker } from '../../src/commands/tracker-session.js';
import { parseBacklog } from '../../src/core/backlog/parse.js';
import { InputError } from '../../src/domain/errors.js';

/** Which tracker a session opens, and the refusal (exit 2) of a run whose tracker names no project or token. */

const backlog = (front: string) => parseBacklog(`---\n${front}\n---\n\n- [ ] T-1 Do it\n`, '/repo/BACKLOG.md').backlog;
const git = (url: string | null) => ({ remoteUrl: async () => url });
const gitlab = 'tracker: { type: gitlab, label: loopfleet }';

describe('openTracker', () => {
  it('opens a gitlab tracker on a GitLab project, with the forge’s token', async () => {
    const session = await openTracker(
      backlog(gitlab),
      git('git@gitlab.com:acme/platform/widgets.git'),
      { GITLAB_TOKEN: 'glpat-x' },
      true,
    );
    expect(session).not.toBeNull();
    await session?.close();
  });

  it('refuses a run whose gitlab tracker is on a GitHub remote, or has no GitLab token, naming what is missing', async () => {
    const onGithub = await openTracker(backlog(gitlab), git('https://github.com/acme/widgets.git'), {}, true).catch(
      (e: unknown) => e,
    );
    expect(onGithub).toBeInstanceOf(InputError);
    expect((onGithub as Error).message).toBe(
      '/repo/BACKLOG.md: tracker: gitlab needs its repository: the repository acme/widgets is on github, not gitlab',
    );
    const noToken = await openTracker(backlog(gitlab), git('https://gitlab.com/acme/widgets.git'), {}, true).catch(
      (e: unknown) => e,
    );
    expect((noToken as Error).message).toMatch(
      /tracker: gitlab needs its repository: no GitLab token: set GITLAB_TOKEN/,
    );
    // Not a run (status, a merge from the CLI): no tracker, nothing refused.
    expect(await openTracker(backlog(gitlab), git('https://gitlab.com/acme/widgets.git'), {}, false)).toBeNull();
  });
});
