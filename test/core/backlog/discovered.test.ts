import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { audit } from '../../../src/commands/audit.js';
import { findRepo } from '../../../src/commands/repo.js';
import { openSession } from '../../../src/commands/session.js';
import { statusRows } from '../../../src/commands/status.js';
import { parseBacklog, runnableTasks } from '../../../src/core/backlog/parse.js';
import { InputErrors } from '../../../src/domain/errors.js';
import { md } from '../../helpers/backlog-text.js';
import { makeRepo } from '../../helpers/git-repo.js';

const BACKLOG = md(
  '---',
  'check: "true"',
  '---',
  '# Backlog',
  '- [ ] T-1 Mine',
  '## Discovered',
  '- [ ] T-2 Proposed',
  '  source: todo src/a.ts:3',
  '  priority: low',
  '### Deeper, still discovered',
  '- [ ] T-3 Proposed too',
  '  source: gh#7',
  '## Later',
  '- [ ] T-4 Mine again',
  '  priority: high',
  '```',
  '## Discovered',
  '```',
  '- [ ] T-5 After a fenced heading',
);

function problems(text: string): string[] {
  try {
    parseBacklog(text, 'BACKLOG.md');
  } catch (e) {
    if (e instanceof InputErrors) return e.errors.map((x) => `${x.line}: ${x.problem}`);
    throw e;
  }
  return [];
}

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups) await c();
  cleanups = [];
});

describe('## Discovered', () => {
  it('marks the items under the heading (and its subheadings) as discovered, with their source and priority', () => {
    const { tasks } = parseBacklog(BACKLOG, 'BACKLOG.md').backlog;
    expect(tasks.map((t) => [t.id, t.discovered ?? false, t.source ?? null, t.priority ?? null])).toEqual([
      ['T-1', false, null, null],
      ['T-2', true, 'todo src/a.ts:3', 'low'],
      ['T-3', true, 'gh#7', null],
      ['T-4', false, null, 'high'],
      ['T-5', false, null, null],
    ]);
  });

  it('leaves proposals out of what runs, unless discovered: run', () => {
    const held = parseBacklog(BACKLOG, 'BACKLOG.md').backlog;
    expect(runnableTasks(held).map((t) => t.id)).toEqual(['T-1', 'T-4', 'T-5']);
    const run = parseBacklog(BACKLOG.replace('check: "true"', 'check: "true"\ndiscovered: run'), 'BACKLOG.md').backlog;
    expect(run.config.discovered).toBe('run');
    expect(runnableTasks(run).map((t) => t.id)).toEqual(['T-1', 'T-2', 'T-3', 'T-4', 'T-5']);
  });

  it('validates the new keys, with the line', () => {
    expect(problems(md('- [ ] T-1 A', '  priority: urgent', '  source: somewhere'))).toEqual([
      "2: priority: must be high, normal, low, got 'urgent'",
      "3: source: 'somewhere' is not a source (todo <file>:<line>, test <file>, lint <file>, dep <package>, gh#<number>, gl#<number> or a Linear key such as ENG-12)",
    ]);
    expect(problems(md('---', 'discovered: yes', 'lessons: maybe', '---', '- [ ] T-1 A'))).toEqual([
      "2: discovered must be hold (proposals under ## Discovered wait for a person) or run, got 'yes'",
      "3: lessons must be on or off, got 'maybe'",
    ]);
    expect(parseBacklog(md('---', 'lessons: off', '---', '- [ ] T-1 A'), 'B').backlog.config.lessons).toBe(false);
    expect(parseBacklog(md('- [ ] T-1 A'), 'B').backlog.config).toMatchObject({ lessons: true, discovered: 'hold' });
  });

  it('a session hands the fleet only what may run, and status lists only that', { timeout: 30_000 }, async () => {
    const r = await makeRepo({ 'BACKLOG.md': BACKLOG });
    cleanups.push(r.cleanup);
    const repo = await findRepo(r.root);
    expect((await statusRows(repo)).map((row) => [row.id, row.status])).toEqual([
      ['T-1', 'queued'],
      ['T-4', 'queued'],
      ['T-5', 'queued'],
    ]);
    const session = await openSession(repo, {
      overrides: {},
      autoMerge: false,
      watch: false,
      env: process.env,
      requireModel: false,
    });
    try {
      expect(session.fleet.tasks().map((t) => t.id)).toEqual(['T-1', 'T-4', 'T-5']);
    } finally {
      await session.close();
    }
    await writeFile(join(r.root, 'BACKLOG.md'), BACKLOG.replace('check: "true"', 'check: "true"\ndiscovered: run'));
    const running = await openSession(repo, {
      overrides: {},
      autoMerge: false,
      watch: false,
      env: process.env,
      requireModel: false,
    });
    try {
      expect(
        running.fleet
          .tasks()
          .map((t) => t.id)
          .sort(),
      ).toEqual(['T-1', 'T-2', 'T-3', 'T-4', 'T-5']);
    } finally {
      await running.close();
    }
    expect((await statusRows(repo)).map((row) => row.id)).toEqual(['T-1', 'T-2', 'T-3', 'T-4', 'T-5']);
  });

  it('audit leaves proposals out of its checks and its cost ceiling', { timeout: 30_000 }, async () => {
    const r = await makeRepo({
      'BACKLOG.md': md(
        '---',
        'gates:',
        '  cost: 1',
        '---',
        '- [ ] T-1 Mine',
        '  check: "true"',
        '## Discovered',
        '- [ ] T-2 Proposed, no check',
        '  source: gh#1',
      ),
    });
    cleanups.push(r.cleanup);
    const lines: string[] = [];
    await audit(await findRepo(r.root), { ...process.env, ANTHROPIC_API_KEY: 'k' }, (l) => lines.push(l));
    const text = lines.join('\n');
    expect(text).toMatch(/1 open task\(s\)/);
    expect(text).toMatch(/✔ every task has a check command/);
    expect(text).not.toMatch(/T-2/);
  });
});
