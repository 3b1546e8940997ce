import { describe, expect, it } from 'vitest';
import { queueRemote } from '../../src/commands/remote-attempts.js';
import { FakeGit } from '../helpers/fake-git.js';

describe('the remote a coordinator shares with its workers', () => {
  it('is queued without the user information its URL carries in .git/config', async () => {
    const git = new FakeGit();
    git.remotes.set('origin', {
      url: 'https://gitlab-ci-token:glcbt-64_secret@gitlab.example.com/g/p.git',
      refs: new Map(),
    });
    const remote = await queueRemote(git);
    expect(remote).toEqual({ remote: 'origin', remoteUrl: 'https://gitlab.example.com/g/p.git' });
    expect(JSON.stringify(remote)).not.toContain('glcbt-64_secret');
  });
});
