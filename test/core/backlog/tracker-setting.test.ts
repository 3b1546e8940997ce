import { describe, expect, it } from 'vitest';
import { parseBacklog } from '../../../src/core/backlog/parse.js';
import { trackerIssueNumber, trackerTaskId } from '../../../src/domain/tracker-setting.js';

const parse = (front: string) => parseBacklog(`---\n${front}\n---\n\n- [ ] T-1 Do it\n`, 'BACKLOG.md').backlog.config;
const problem = (front: string) => {
  try {
    parse(front);
  } catch (error) {
    return (error as Error).message;
  }
  return null;
};

describe('tracker:', () => {
  it('reads the type and label, with the defaults for the rest', () => {
    expect(parse('tracker: { type: github, label: loopfleet }').tracker).toEqual({
      type: 'github',
      label: 'loopfleet',
      labelPrefix: 'loopfleet:',
      pollEveryMs: 60_000,
      maxPages: 3,
    });
    expect(
      parse("tracker: { type: github, label: agent, labels: { prefix: 'lf/' }, poll: 30s, pages: 5 }").tracker,
    ).toMatchObject({ labelPrefix: 'lf/', pollEveryMs: 30_000, maxPages: 5 });
    expect(parse('check: true').tracker).toBeUndefined();
    expect(parse('tracker: { type: gitlab, label: loopfleet, pages: 2 }').tracker).toMatchObject({
      type: 'gitlab',
      label: 'loopfleet',
      maxPages: 2,
    });
  });

  it('reports bad values at their line, with the backlog’s words', () => {
    expect(problem('tracker: { type: jira, label: x }')).toBe(
      "BACKLOG.md:2: tracker.type must be github, gitlab or linear, got 'jira'",
    );
    expect(problem('tracker: { type: github }')).toMatch(/BACKLOG.md:2: tracker.label must name the label/);
    expect(problem('tracker: { type: github, label: x, lable: y }')).toMatch(
      /unknown key 'tracker.lable' \(did you mean/,
    );
    expect(problem('tracker: { type: github, label: x, poll: 1s }')).toMatch(
      /tracker.poll must be an interval of 10s or more/,
    );
    expect(problem('tracker: { type: github, label: "loopfleet:x" }')).toMatch(
      /must not start with the state labels' prefix/,
    );
    expect(problem('tracker: github')).toMatch(/tracker must be a mapping/);
  });

  it('reads a Linear tracker: its team, its states, state labels only when asked for', () => {
    expect(parse('tracker: { type: linear, team: ENG, label: loopfleet }').tracker).toEqual({
      type: 'linear',
      team: 'ENG',
      label: 'loopfleet',
      labelPrefix: 'loopfleet:',
      pollEveryMs: 60_000,
      maxPages: 3,
      stateLabels: false,
    });
    expect(
      parse(
        "tracker: { type: linear, team: ENG, label: x, labels: { prefix: 'lf:' }, states: { running: In Progress, merged: Done } }",
      ).tracker,
    ).toMatchObject({ labelPrefix: 'lf:', states: { running: 'In Progress', merged: 'Done' } });
    expect(
      parse("tracker: { type: linear, team: ENG, label: x, labels: { prefix: 'lf:' } }").tracker?.stateLabels,
    ).toBeUndefined();
    expect(problem('tracker: { type: linear, label: x }')).toMatch(/BACKLOG.md:2: tracker: linear needs team/);
    expect(problem('tracker: { type: linear, team: eng, label: x }')).toMatch(
      /tracker.team must be a Linear team's key/,
    );
    expect(problem('tracker: { type: linear, team: ENG, label: x, states: { runing: Doing } }')).toMatch(
      /unknown key 'tracker.states.runing' \(did you mean/,
    );
    expect(problem('tracker: { type: github, label: x, team: ENG }')).toMatch(/are Linear's/);
  });

  it('takes Linear keys as tracker ids and sources, in after: too', () => {
    const tasks = parseBacklog(
      '- [ ] ENG-12 Fix it\n  source: ENG-12\n- [ ] T-1 Then this\n  after: ENG-12\n',
      'BACKLOG.md',
    ).backlog.tasks;
    expect(tasks.map((t) => [t.id, t.source, t.after])).toEqual([
      ['ENG-12', 'ENG-12', []],
      ['T-1', undefined, ['ENG-12']],
    ]);
  });

  it('takes ids of tracker issues as task ids, in after: too', () => {
    const tasks = parseBacklog('- [ ] gh#12 Fix it\n- [ ] T-1 Then this\n  after: gh#12\n', 'BACKLOG.md').backlog.tasks;
    expect(tasks.map((t) => [t.id, t.after])).toEqual([
      ['gh#12', []],
      ['T-1', ['gh#12']],
    ]);
    const gl = parseBacklog('- [ ] gl#45 Fix it\n- [ ] T-1 Then this\n  after: gl#45\n', 'BACKLOG.md').backlog.tasks;
    expect(gl.map((t) => [t.id, t.after])).toEqual([
      ['gl#45', []],
      ['T-1', ['gl#45']],
    ]);
    expect(trackerTaskId({ type: 'gitlab' }, 45)).toBe('gl#45');
    expect(trackerIssueNumber({ type: 'gitlab' }, 'gl#45')).toBe(45);
    expect(trackerIssueNumber({ type: 'github' }, 'gl#45')).toBeNull();
    expect(trackerIssueNumber({ type: 'gitlab' }, 'gl#4x')).toBeNull();
    expect(() => parseBacklog('- [ ] gh#12 One\n- [ ] gh#012 Two\n', 'BACKLOG.md')).toThrow(
      /names the same task as gh#12/,
    );
  });
});
