import { describe, expect, it } from 'vitest';
import { committedTick } from '../../../src/core/backlog/committed-tick.js';

const FRONT = '---\ncheck: true\n---\n\n# Backlog\n\n';

describe('committedTick', () => {
  it('ticks the item in the committed text and changes nothing else', () => {
    const committed = `${FRONT}- [ ] T-1 One\n  detail\n- [ ] T-2 Two\n`;
    expect(committedTick(committed, committed, 'T-2')).toBe(`${FRONT}- [ ] T-1 One\n  detail\n- [x] T-2 Two\n`);
  });

  it("writes the ids loopfleet gave in the working copy, but none of the person's other edits", () => {
    const committed = `${FRONT}- [ ] One\n- [ ] Two\n- [ ] T-9 Nine\n`;
    const working = `${FRONT}- [ ] T-1 One\n- [ ] T-2 Two\n  a note the person is still writing\n- [ ] T-9 Nine\n- [ ] A new idea\n`;
    expect(committedTick(committed, working, 'T-2')).toBe(`${FRONT}- [ ] T-1 One\n- [x] T-2 Two\n- [ ] T-9 Nine\n`);
  });

  it('keeps CRLF line endings and a BOM', () => {
    const committed = `\uFEFF- [ ] T-1 One\r\n- [ ] Two\r\n`;
    expect(committedTick(committed, '- [ ] T-1 One\r\n- [ ] T-2 Two\r\n', 'T-1')).toBe(
      `\uFEFF- [x] T-1 One\r\n- [ ] T-2 Two\r\n`,
    );
  });

  it('is null when the committed backlog has no such item', () => {
    expect(committedTick(`${FRONT}- [ ] T-1 One\n`, null, 'T-5')).toBeNull();
    expect(
      committedTick(`${FRONT}- [ ] T-1 One\n`, `${FRONT}- [ ] T-1 One\n- [ ] T-5 New, uncommitted\n`, 'T-5'),
    ).toBeNull();
  });

  it('leaves an item that is ticked already as it is', () => {
    const committed = `${FRONT}- [x] T-1 One\n`;
    expect(committedTick(committed, committed, 'T-1')).toBe(committed);
  });
});
