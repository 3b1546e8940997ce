/** Which commits setup may run on outside the sandbox, on a real repository and the real merge. */
import { afterEach, describe, expect, it } from 'vitest';
import { SimpleGitAdapter } from '../../../src/adapters/git/simple-git.js';
import { SetupTrust } from '../../../src/core/attempt/setup-trust.js';
import { git, makeRepo, writeFiles } from '../../helpers/git-repo.js';

let cleanup: (() => Promise<void>) | null = null;
afterEach(async () => {
  await cleanup?.();
  cleanup = null;
});

async function commit(root: string, file: string, text: string): Promise<string> {
  await writeFiles(root, { [file]: text });
  await git(root, 'add', '-A');
  await git(root, 'commit', '--quiet', '-m', file);
  return git(root, 'rev-parse', 'HEAD');
}

describe('SetupTrust', () => {
  it("the person's own commits keep base trusted; a landing makes it and everything on top of it untrusted", async () => {
    const r = await makeRepo({ 'scripts/setup.sh': 'echo base\n' });
    cleanup = r.cleanup;
    const g = new SimpleGitAdapter(r.root);
    const trust = new SetupTrust(g);
    const start = await git(r.root, 'rev-parse', 'HEAD');
    expect(await trust.landedIn(start)).toBeNull();

    // The person commits on base during the run: still their code.
    const own = await commit(r.root, 'mine.txt', 'mine\n');
    expect(await trust.landedIn(own)).toBeNull();

    // An agent's branch lands through the fleet's merge.
    await git(r.root, 'branch', 'loop/T-1');
    await git(r.root, 'checkout', '--quiet', 'loop/T-1');
    await commit(r.root, 'scripts/setup.sh', 'echo pwned\n');
    await git(r.root, 'checkout', '--quiet', 'main');
    const result = await trust.landing(() => g.merge('loop/T-1', 'main', 'Merge loop/T-1'));
    expect(result.kind).toBe('merged');
    const landed = (result as { commit: string }).commit;
    expect(await trust.landedIn(landed)).toBe(landed);

    // The person's commit on top of the landing does not make it theirs; an older commit stays trusted.
    await git(r.root, 'reset', '--quiet', '--hard', landed);
    const after = await commit(r.root, 'later.txt', 'later\n');
    expect(await trust.landedIn(after)).toBe(landed);
    expect(await trust.landedIn(own)).toBeNull();
  });

  it('a question asked while a landing is under way waits for it', async () => {
    const r = await makeRepo({ 'a.txt': 'a\n' });
    cleanup = r.cleanup;
    const g = new SimpleGitAdapter(r.root);
    const trust = new SetupTrust(g);
    const head = await git(r.root, 'rev-parse', 'HEAD');
    let finish!: () => void;
    const landing = trust.landing(
      () => new Promise((resolve) => (finish = () => resolve({ kind: 'merged', commit: head }))),
    );
    const asked = trust.landedIn(head);
    finish();
    await landing;
    expect(await asked).toBe(head);
  });
});
