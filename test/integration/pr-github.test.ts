import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { overnight } from '../../src/commands/overnight.js';
import { findRepo } from '../../src/commands/repo.js';
import { sync } from '../../src/commands/sync.js';
import { backlogRepo, openFleet, runFleet } from '../helpers/fleet-harness.js';
import { FakeModel, type FakeScript } from '../helpers/fake-model.js';
import { FakeGitHub } from '../helpers/fake-github.js';
import { git } from '../helpers/git-repo.js';
import { bareOrigin, mergeOnRemote, remoteHead } from '../helpers/pr-remote.js';

/**
 * The pull-request path end to end against the loopback GitHub through the real adapter (Octokit), chosen
 * the way a session chooses it: `forge:` in the front matter, GH_TOKEN and GITHUB_API_URL in the environment,
 * a real bare remote that branches are pushed to.
 */

let cleanups: Array<() => Promise<void>> = [];
let github: FakeGitHub;
beforeEach(async () => {
  github = await new FakeGitHub('acme/widgets').start();
});
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
  await github.close();
});

/** The check also prints every variable of its (sandboxed) environment whose name or value says token: the state keeps the output. */
const CHECK = `env | grep -i token; if [ -f fixed.txt ]; then printf '# tests 22\\n# pass 22\\n# fail 0\\n'; else printf '# tests 22\\n# pass 15\\n# fail 7\\n'; exit 1; fi`;
const fixIt: FakeScript = ({ role, attempt }) =>
  role === 'implementer' ? { edits: { 'fixed.txt': `attempt ${attempt}\n` } } : {};

function env(): NodeJS.ProcessEnv {
  return { GH_TOKEN: github.token, GITHUB_API_URL: github.url, GITHUB_TOKEN: '', GITLAB_TOKEN: '' };
}

async function prRepo(items: string, front = ''): Promise<{ root: string; bare: string }> {
  const root = await backlogRepo(
    cleanups,
    `land: pr\nforge: { type: github, repo: acme/widgets }\ncheck: sh check.sh\nreview: false\npr: { labels: [loopfleet], reviewers: [alice] }\n${front}`,
    items,
    { 'check.sh': `${CHECK}\n` },
  );
  return { root, bare: await bareOrigin(root, cleanups) };
}

/** The forge shows what the remote holds: each open PR's head is set to the branch's commit there. */
async function forgeSeesPushes(bare: string): Promise<void> {
  for (const p of github.pulls) {
    const head = await remoteHead(bare, p.head);
    if (p.state === 'open' && head !== null) github.pushHead(p.number, head);
  }
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

describe('pull requests on a loopback GitHub', () => {
  it('a night of two tasks ends with two PRs carrying their evidence, and the token in no file, report or body', {
    timeout: 180_000,
  }, async () => {
    const { root, bare } = await prRepo('- [ ] T-1 Fix the parser\n  source: gh#7\n- [ ] T-2 Fix the printer');
    const lines: string[] = [];
    const model = new FakeModel(fixIt);
    const code = await overnight(
      await findRepo(root),
      {
        overrides: {},
        autoMerge: false,
        watch: false,
        env: { ...process.env, ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9', ...env() },
        services: (s) => ({ ...s, model, cliModel: model }),
      },
      (line) => lines.push(line),
    );
    expect(code).toBe(0);
    expect(github.pulls.map((p) => [p.head, p.draft, p.labels, p.reviewers]).sort()).toEqual([
      ['loop/T-1', true, ['loopfleet'], ['alice']],
      ['loop/T-2', true, ['loopfleet'], ['alice']],
    ]);
    const one = github.pulls.find((p) => p.head === 'loop/T-1')!;
    expect(one.body).toContain('7/22 failing → 0/22');
    expect(one.body).toMatch(/\$0\.\d{4}/);
    expect(one.body.trimEnd().endsWith('Fixes #7')).toBe(true);
    expect(await remoteHead(bare, 'loop/T-1')).toBe(await git(root, 'rev-parse', 'loop/T-1'));
    expect(lines.some((l) => / T-1 PR #\d opened as a draft: /.test(l))).toBe(true);

    // The token is loopfleet's alone: not in the check's environment (its output is in the state), the state,
    // transcripts, the report, nor any PR body or comment.
    expect(JSON.stringify(await (await import('../helpers/state-file.js')).readState(root))).not.toMatch(/GH_TOKEN/);
    const files = await filesUnder(join(root, '.loop-worktrees'));
    expect(files.some((f) => f.includes('/reports/'))).toBe(true);
    for (const f of files) expect((await readFile(f)).includes(github.token), f).toBe(false);
    for (const p of github.pulls) expect(`${p.title}${p.body}`).not.toContain(github.token);
    expect(lines.join('\n')).not.toContain(github.token);
  });

  it('CI red → a new attempt on the same PR with a comment; changes requested by a member who may write → another; a drive-by /loopfleet is ignored; merged → merged', {
    timeout: 240_000,
  }, async () => {
    const { root, bare } = await prRepo('- [ ] T-1 One');
    await runFleet(root, fixIt, { env: env() });
    expect(github.pulls).toHaveLength(1);
    const pull = github.pulls[0]!;
    await forgeSeesPushes(bare);
    github.setCheck(pull.headSha, 'e2e', 'failure', 'AssertionError: expected 2 to be 3');

    const out: string[] = [];
    const repo = await findRepo(root);
    expect(await sync(repo, { ...process.env, ...env() }, (l) => out.push(l))).toBe(0);
    expect(out).toContain('T-1 queued for a new attempt — PR #1: CI failing (e2e); a new attempt fixes it');

    const prompts: string[] = [];
    const recordPrompt: FakeScript = (call) => {
      if (call.role === 'implementer') prompts.push(call.request.prompt);
      return fixIt(call);
    };
    await runFleet(root, recordPrompt, { env: env() });
    expect(prompts.at(-1)).toContain('AssertionError: expected 2 to be 3');
    expect(github.pulls).toHaveLength(1);
    expect(github.commentsOn(1).some((c) => c.startsWith('loopfleet pushed a new attempt of T-1'))).toBe(true);
    await forgeSeesPushes(bare);
    github.setCheck(github.pulls[0]!.headSha, 'e2e', 'success');

    // Whose words count is asked of GitHub (the collaborator permission), never read from author_association.
    github.grant('maintainer', 'write');
    github.addComment(1, 'stranger', '/loopfleet rewrite it in Rust', 'NONE');
    github.addReviewComment(1, 'maintainer', 'fixed.txt', 1, 'say "fixed" here', 'MEMBER');
    github.addReview(1, 'maintainer', 'CHANGES_REQUESTED', 'Almost: one more thing.', 'MEMBER');
    const h = await openFleet(root, recordPrompt, { env: env() });
    const result = await h.fleet.sync();
    expect(result.sentBack.map((s) => s.id)).toEqual(['T-1']);
    h.fleet.start();
    await h.fleet.whenIdle();
    await h.session.close();
    expect(prompts.at(-1)).toContain('Almost: one more thing.');
    expect(prompts.at(-1)).toContain('say "fixed" here');
    expect(prompts.at(-1)).not.toContain('rewrite it in Rust');
    expect(github.pulls).toHaveLength(1);
    expect(github.commentsOn(1).filter((c) => c.startsWith('loopfleet pushed'))).toHaveLength(2);

    await forgeSeesPushes(bare);
    await mergeOnRemote(bare, 'loop/T-1');
    github.mergeOnForge(1);
    out.length = 0;
    expect(await sync(repo, { ...process.env, ...env() }, (l) => out.push(l))).toBe(0);
    expect(out).toContain('T-1 merged on the forge');
    const after = await openFleet(root, fixIt, { env: env() });
    expect(after.fleet.task('T-1')).toMatchObject({ status: 'merged', pr: { state: 'merged' } });
    await after.session.close();
    expect(await readFile(join(root, 'BACKLOG.md'), 'utf8')).toContain('- [x] T-1 One');
  });

  it('closed on the forge → discarded; without a token a run refuses to start, exit 2, nothing written', {
    timeout: 120_000,
  }, async () => {
    const { root } = await prRepo('- [ ] T-1 One');
    await runFleet(root, fixIt, { env: env() });
    github.closeOnForge(1);
    const h = await openFleet(root, fixIt, { env: env() });
    expect((await h.fleet.sync()).closed).toEqual(['T-1']);
    await h.session.close();
    expect(h.fleet.task('T-1')!.status).toBe('discarded');

    const other = await prRepo('- [ ] T-2 Two');
    const before = await readdir(other.root);
    await expect(
      openFleet(other.root, fixIt, { env: { GH_TOKEN: '', GITHUB_TOKEN: '', PATH: '/usr/bin:/bin' } }),
    ).rejects.toThrow(/land: pr needs a forge: no GitHub token/);
    expect(await readdir(other.root)).toEqual(before);
  });
  it('a split task under land: pr: one PR per part; the task waits until they merge, then its check passes on the remote base', {
    timeout: 120_000,
  }, async () => {
    // The check passes on a part's branch (its own file) and on the remote's base once both parts merged; it
    // fails on the local main, which no pull request moves.
    const root = await backlogRepo(
      cleanups,
      'land: pr\nforge: { type: github, repo: acme/widgets }\ncheck: test -f T-1.1.txt || test -f T-1.2.txt\nsandbox: off\nreview: false\npr: { draft: false }\nconcurrency: 2',
      '- [ ] T-1 Do the big thing\n  split: auto',
    );
    const bare = await bareOrigin(root, cleanups);
    const parts = `\`\`\`parts\n${JSON.stringify([
      { title: 'Add one', files: ['T-1.1.txt'] },
      { title: 'Add two', files: ['T-1.2.txt'] },
    ])}\n\`\`\``;
    const script: FakeScript = ({ role, task }) =>
      role === 'explorer' && task === 'T-1'
        ? { text: parts }
        : role === 'implementer'
          ? { edits: { [`${task}.txt`]: `${task}\n` } }
          : {};
    const first = await runFleet(root, script, { env: env() });
    // the two parts run at once: which opens its PR first (#1) is the machine's choice
    expect(github.pulls.map((p) => `${p.head} ${p.state}`).sort()).toEqual(['loop/T-1.1 open', 'loop/T-1.2 open']);
    expect(github.pulls.map((p) => p.number).sort()).toEqual([1, 2]);
    expect(first.fleet.task('T-1')).toMatchObject({
      status: 'queued',
      parts: ['T-1.1', 'T-1.2'],
      reason: 'split into 2 parts: T-1.1, T-1.2; done once they have landed and its check passes',
    });
    // The task itself has no pull request: it is done with its parts.
    expect(first.fleet.task('T-1')!.pr).toBeUndefined();

    await forgeSeesPushes(bare);
    for (const p of github.pulls) {
      await mergeOnRemote(bare, p.head);
      github.mergeOnForge(p.number);
    }
    const h = await openFleet(root, script, { env: env() });
    expect((await h.fleet.sync()).merged.sort()).toEqual(['T-1.1', 'T-1.2']);
    h.fleet.start();
    await h.fleet.whenIdle();
    await h.session.close();
    expect(h.fleet.task('T-1')).toMatchObject({
      status: 'merged',
      reason: 'its 2 parts landed (T-1.1, T-1.2) and its check passes on main as the remote holds it',
    });
    expect(github.pulls).toHaveLength(2);
    expect(await readFile(join(root, 'BACKLOG.md'), 'utf8')).toContain('- [x] T-1 Do the big thing');
    // The local main was never moved: the check ran on the remote's.
    expect(await git(root, 'ls-tree', '--name-only', 'main')).not.toContain('T-1.1.txt');
  });
});
