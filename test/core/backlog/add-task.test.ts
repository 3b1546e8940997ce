import { describe, expect, it } from 'vitest';
import { planAddTask, type NewTask } from '../../../src/core/backlog/add-task.js';
import { parseBacklog } from '../../../src/core/backlog/parse.js';
import { edit } from '../../../src/core/backlog/write-back.js';
import { InputErrors, UsageError } from '../../../src/domain/errors.js';
import { FakeBacklogFile } from '../../helpers/fake-backlog-file.js';

const PATH = '/repo/BACKLOG.md';
const FRONT = '---\ncheck: npm test\n---\n\n# Backlog\n\n';

/** The file with the task added, as the write-back writes it. */
async function added(text: string, task: NewTask, taken: string[] = []): Promise<{ text: string; id: string }> {
  const file = new FakeBacklogFile(text, PATH);
  const id = await edit(
    file,
    (now) => {
      const plan = planAddTask(now, PATH, task, taken);
      return { edits: [plan.edit], result: plan.id };
    },
    {},
  );
  return { text: file.text!, id };
}

function refusal(text: string, task: NewTask): Error {
  try {
    planAddTask(text, PATH, task);
  } catch (error) {
    return error as Error;
  }
  throw new Error('planAddTask did not refuse');
}

describe('planAddTask', () => {
  it("writes the item as a person does, after the last task's lines, with the next id, keeping every other byte", async () => {
    const text = `${FRONT}- [ ] T-1 One\n  check: true\n  Some words.\n\n- [x] T-7 Seven\n\nA closing paragraph.\n`;
    const result = await added(text, {
      title: '  Write a changelog ',
      description: '\n  Every change since v1.\n\n    - grouped\n',
      keys: { attempts: '2', after: 'T-1' },
    });
    expect(result.id).toBe('T-8');
    expect(result.text).toBe(
      text.replace(
        '- [x] T-7 Seven\n',
        '- [x] T-7 Seven\n- [ ] T-8 Write a changelog\n  attempts: 2\n  after: T-1\n  Every change since v1.\n\n    - grouped\n',
      ),
    );
    const task = parseBacklog(result.text, PATH).backlog.tasks.find((t) => t.id === 'T-8');
    expect(task).toMatchObject({
      title: 'Write a changelog',
      attempts: 2,
      after: ['T-1'],
      description: 'Every change since v1.\n\n  - grouped',
    });
  });

  it('never gives an id state remembers, and leaves the items without one to be numbered as before', async () => {
    const text = `${FRONT}- [ ] T-1 One\n- [ ] Unnumbered\n`;
    const result = await added(text, { title: 'New' }, ['T-1', 'T-5']);
    expect(result.id).toBe('T-7');
    expect(result.text).toBe(`${FRONT}- [ ] T-1 One\n- [ ] Unnumbered\n- [ ] T-7 New\n`);
    const parsed = parseBacklog(result.text, PATH, { takenIds: ['T-5'] });
    expect(parsed.backlog.tasks.map((t) => [t.id, t.title])).toEqual([
      ['T-1', 'One'],
      ['T-8', 'Unnumbered'],
      ['T-7', 'New'],
    ]);
  });

  it('goes before ## Discovered when no task runs yet, never becoming a proposal', async () => {
    const text = `${FRONT}## Discovered\n\n- [ ] T-3 A proposal\n  source: gh#4\n`;
    const result = await added(text, { title: 'First real task' });
    expect(result.text).toBe(
      `${FRONT}- [ ] T-4 First real task\n\n## Discovered\n\n- [ ] T-3 A proposal\n  source: gh#4\n`,
    );
    const tasks = parseBacklog(result.text, PATH).backlog.tasks;
    expect(tasks.find((t) => t.id === 'T-4')?.discovered).toBeUndefined();
    expect(tasks.find((t) => t.id === 'T-3')?.discovered).toBe(true);
  });

  it('keeps CRLF line endings, a missing last newline and a file without items', async () => {
    const crlf = '---\r\ncheck: true\r\n---\r\n- [ ] T-1 One\r\n';
    expect((await added(crlf, { title: 'Two', keys: { review: 'false' } })).text).toBe(
      `${crlf}- [ ] T-2 Two\r\n  review: false\r\n`,
    );
    expect((await added(`${FRONT}- [ ] T-1 One`, { title: 'Two' })).text).toBe(`${FRONT}- [ ] T-1 One\n- [ ] T-2 Two`);
    expect((await added('# Backlog\n', { title: 'One' })).text).toBe('# Backlog\n- [ ] T-1 One\n');
  });

  it("refuses what the parser refuses, in the parser's words, at the line the task would have", () => {
    const text = `${FRONT}- [ ] T-1 One\n`;
    const bad = refusal(text, { title: 'Two', keys: { attempts: 'zero', after: 'T-9', every: 'often' } });
    expect(bad).toBeInstanceOf(InputErrors);
    expect(bad.message.split('\n')).toEqual([
      `${PATH}:9: attempts: must be a positive whole number, got 'zero'`,
      `${PATH}:10: after: T-9 names no task in this backlog`,
      expect.stringMatching(new RegExp(`^${PATH}:11: every: `)),
    ]);
    // A file that does not parse as it is: its own problems, in the parser's words.
    const broken = refusal(`---\nconcurrency: 0\n---\n- [ ] T-1 One\n`, { title: 'Two' });
    expect(broken).toBeInstanceOf(InputErrors);
    expect(broken.message).toMatch(/^\/repo\/BACKLOG\.md:2: /);
  });

  it('refuses input that would not read back as given, naming the field', () => {
    const text = `${FRONT}- [ ] T-1 One\n\n## Discovered\n\n- [ ] T-2 Proposal\n  source: gh#1\n`;
    const cases: Array<[NewTask, RegExp]> = [
      [{ title: ' ' }, /^title: write what to do/],
      [{ title: 'a\nb' }, /^title: holds a control character \(U\+000A\)/],
      [{ title: 'Owned \u001b]52;c;SGVsbG8=\u0007' }, /^title: holds a control character \(U\+001B\)/],
      [{ title: 'x', keys: { priorty: 'high' } }, /^keys: 'priorty' is not a task key \(did you mean 'priority'\?\)/],
      [{ title: 'x', keys: { check: 'true\n- [ ] T-9 Injected' } }, /^keys\.check: holds a control character/],
      [{ title: 'x', description: 'fine\n  check: rm -rf /' }, /^description line 2: starts with `check:`/],
      [{ title: 'x', description: 'bidi \u202e here' }, /^description line 1: holds a control character \(U\+202E\)/],
      [{ title: 'Hide <!-- the rest' }, /the new task would not read back as given/],
      [{ title: 'x', description: '```\nan open fence' }, /would not read back as given|change the tasks after it/],
    ];
    for (const [task, words] of cases) {
      const error = refusal(text, task);
      expect(error, JSON.stringify(task)).toBeInstanceOf(UsageError);
      expect(error.message, JSON.stringify(task)).toMatch(words);
    }
  });

  it("redoes the edit on a person's save that lands meanwhile, keeping it", async () => {
    const file = new FakeBacklogFile(`${FRONT}- [ ] T-1 One\n`, PATH);
    file.beforeReplace = () => {
      file.beforeReplace = null;
      file.save(`${FRONT}- [ ] T-1 One\n- [ ] T-2 Saved by a person\n`);
    };
    const id = await edit(
      file,
      (now) => {
        const plan = planAddTask(now, PATH, { title: 'Added' });
        return { edits: [plan.edit], result: plan.id };
      },
      {},
    );
    expect(id).toBe('T-3');
    expect(file.text).toBe(`${FRONT}- [ ] T-1 One\n- [ ] T-2 Saved by a person\n- [ ] T-3 Added\n`);
  });
});
