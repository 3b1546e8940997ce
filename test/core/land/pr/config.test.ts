import { describe, expect, it } from 'vitest';
import { parseBacklog } from '../../../../src/core/backlog/parse.js';
import { backlogRefusal, md } from '../../../helpers/backlog-text.js';

const FILE = 'BACKLOG.md';

const problems = (text: string) => backlogRefusal(text, FILE);

describe('front matter: land, remote, forge, pr', () => {
  it('reads every key, and the defaults without them', () => {
    const { config, tasks } = parseBacklog(
      md(
        '---',
        'land: pr',
        'remote: upstream',
        'forge: { type: gitlab, repo: group/sub/project }',
        'pr: { draft: false, labels: [loopfleet, night shift], reviewers: [alice, bob-2], allow: [review-bot], timeout: 45s }',
        '---',
        '- [ ] T-1 x',
        '  land: merge',
      ),
      FILE,
    ).backlog;
    expect([config.land, config.remote, config.forge, config.pr]).toEqual([
      'pr',
      'upstream',
      { type: 'gitlab', repo: 'group/sub/project' },
      {
        draft: false,
        labels: ['loopfleet', 'night shift'],
        reviewers: ['alice', 'bob-2'],
        syncEveryMs: 300_000,
        allow: ['review-bot'],
        timeoutMs: 45_000,
      },
    ]);
    expect(tasks[0]!.land).toBe('merge');
    const plain = parseBacklog(md('---', 'check: "true"', '---', '- [ ] T-1 x'), FILE).backlog;
    expect([plain.config.land, plain.config.remote, plain.config.forge, plain.config.pr]).toEqual([
      'merge',
      'origin',
      undefined,
      { draft: true, labels: ['loopfleet'], reviewers: [], syncEveryMs: 300_000, allow: [], timeoutMs: 30_000 },
    ]);
    expect(
      parseBacklog(md('---', 'forge: none', 'pr:', '  draft: true', '---', '- [ ] T-1 x'), FILE).backlog.config.forge,
    ).toBe('none');
  });

  it.each([
    [md('---', 'check: "true"', 'land: push', '---', '- [ ] T-1 x'), 3, "land must be merge or pr, got 'push'"],
    [md('---', 'remote: --upload-pack=x', '---', '- [ ] T-1 x'), 2, 'remote must name a git remote'],
    [
      md('---', 'forge: bitbucket', '---', '- [ ] T-1 x'),
      2,
      "forge must be auto, github, gitlab, none or { type: github, repo: owner/name }, got 'bitbucket'",
    ],
    [
      md('---', 'forge: { type: github }', '---', '- [ ] T-1 x'),
      2,
      "forge.repo must name the repository as owner/name, got ''",
    ],
    [md('---', 'forge: { type: github, repo: x, owner: y }', '---', '- [ ] T-1 x'), 2, "unknown key 'forge.owner'"],
    [md('---', 'pr:', '  draft: maybe', '---', '- [ ] T-1 x'), 3, "pr.draft must be true or false, got 'maybe'"],
    [
      md('---', 'pr:', '  reviewer: [alice]', '---', '- [ ] T-1 x'),
      3,
      "unknown key 'pr.reviewer' (did you mean 'reviewers'?)",
    ],
    [
      md('---', 'pr: { reviewers: ["@alice"] }', '---', '- [ ] T-1 x'),
      2,
      "pr.reviewers must be a list of names, e.g. [octocat], got '@alice'",
    ],
    [md('---', 'pr: yes', '---', '- [ ] T-1 x'), 2, 'pr must be a mapping'],
    [
      md('---', 'pr: { sync: soon }', '---', '- [ ] T-1 x'),
      2,
      "pr.sync must be an interval such as 2m or 30s, got 'soon'",
    ],
    [
      md('---', 'pr: { allow: ["@mallory"] }', '---', '- [ ] T-1 x'),
      2,
      "pr.allow must be a list of names, e.g. [octocat], got '@mallory'",
    ],
    [
      md('---', 'pr: { timeout: 10ms }', '---', '- [ ] T-1 x'),
      2,
      "pr.timeout must be an interval of a second or more such as 30s, got '10ms'",
    ],
    [md('---', '---', '- [ ] T-1 x', '  land: forge'), 4, "land: must be merge or pr, got 'forge'"],
  ])('refuses bad input with its file and line: %#', (text, line, fragment) => {
    const errs = problems(text);
    expect(errs).toHaveLength(1);
    expect(errs[0]!.file).toBe(FILE);
    expect(errs[0]!.line).toBe(line);
    expect(errs[0]!.problem).toContain(fragment);
  });

  it('takes gl#N as a source, as discover writes GitLab issues', () => {
    expect(parseBacklog(md('---', '---', '- [ ] T-1 x', '  source: gl#12'), FILE).backlog.tasks[0]!.source).toBe(
      'gl#12',
    );
  });
});
