import { chmod, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseBacklog } from '../../../src/core/backlog/parse.js';
import { FsBacklogFile } from '../../../src/adapters/store/file-store.js';
import { addIds, tickDone } from '../../../src/core/backlog/write-back.js';
import { FakeBacklogFile } from '../../helpers/fake-backlog-file.js';

let dir: string;
let file: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'loopfleet-write-back-'));
  file = join(dir, 'BACKLOG.md');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const read = (): Promise<string> => readFile(file, 'utf8');

describe('tickDone', () => {
  it('ticks only the item with the id and keeps every other byte', async () => {
    const text =
      '---\r\nconcurrency: 2\r\n---\r\n\r\n- [ ] T-1 One\r\n  check: true\r\n* [ ] T-2 Two\r\n- [ ] T-10 Ten';
    await writeFile(file, text);
    expect(await tickDone(new FsBacklogFile(file), 'T-2')).toBe(true);
    expect(await read()).toBe(text.replace('* [ ] T-2', '* [x] T-2'));
    expect(await tickDone(new FsBacklogFile(file), 'T-10')).toBe(true);
    expect(await read()).toBe(text.replace('* [ ] T-2', '* [x] T-2').replace('- [ ] T-10', '- [x] T-10'));
  });

  it('keeps invalid UTF-8 and a byte order mark elsewhere in the file', async () => {
    const bytes = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from('- [ ] T-1 caf\u00e9 '),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('\n- [ ] T-2 next\n'),
    ]);
    await writeFile(file, bytes);
    expect(await tickDone(new FsBacklogFile(file), 'T-1')).toBe(true);
    expect(await tickDone(new FsBacklogFile(file), 'T-2')).toBe(true);
    const expected = Buffer.from(bytes);
    expected[3 + 3] = 0x78; // '- [' then the x
    expected[bytes.indexOf('- [ ] T-2') + 3] = 0x78;
    expect((await readFile(file)).equals(expected)).toBe(true);
  });

  it('returns false and writes nothing when the id is gone', async () => {
    await writeFile(file, '- [ ] T-1 One\n```\n- [ ] T-2 fenced\n```\n');
    const before = await stat(file);
    expect(await tickDone(new FsBacklogFile(file), 'T-3')).toBe(false);
    expect(await tickDone(new FsBacklogFile(file), 'T-2')).toBe(false);
    expect((await stat(file)).mtimeMs).toBe(before.mtimeMs);
  });

  it('leaves an item already done as it is', async () => {
    await writeFile(file, '- [X] T-1 One\n');
    let writes = 0;
    expect(await tickDone(new FsBacklogFile(file), 'T-1', { onWrite: () => writes++ })).toBe(true);
    expect(await read()).toBe('- [X] T-1 One\n');
    expect(writes).toBe(0);
  });

  it('keeps a person’s edit made between parse and write', async () => {
    await writeFile(file, '# Backlog\n\n- [ ] T-1 One\n- [ ] T-2 Two\n');
    const { backlog } = parseBacklog(await read(), file);
    expect(backlog.tasks[1]!.line).toBe(4);
    // The person inserts lines above and edits the item's title while the fleet runs.
    await writeFile(file, '# Backlog\n\nSome notes.\n\n- [ ] T-1 One\n- [ ] T-2 Two, reworded\n- [ ] New task\n');
    expect(await tickDone(new FsBacklogFile(file), 'T-2')).toBe(true);
    expect(await read()).toBe('# Backlog\n\nSome notes.\n\n- [ ] T-1 One\n- [x] T-2 Two, reworded\n- [ ] New task\n');
  });

  it('replaces the file atomically: no temporary file left, mode kept, onWrite told', async () => {
    await writeFile(file, '- [ ] T-1 One\n');
    await chmod(file, 0o640);
    const seen: Array<[string, string]> = [];
    await tickDone(new FsBacklogFile(file), 'T-1', { onWrite: (before, after) => seen.push([before, after]) });
    expect(await readdir(dir)).toEqual(['BACKLOG.md']);
    expect((await stat(file)).mode & 0o777).toBe(0o640);
    expect(seen).toEqual([['- [ ] T-1 One\n', '- [x] T-1 One\n']]);
  });

  it('writes through a symbolic link to the real file', async () => {
    const real = join(dir, 'real.md');
    await writeFile(real, '- [ ] T-1 One\n');
    await symlink(real, file);
    await tickDone(new FsBacklogFile(file), 'T-1');
    expect(await readFile(real, 'utf8')).toBe('- [x] T-1 One\n');
    expect((await stat(file)).isFile()).toBe(true);
  });
});

describe('addIds', () => {
  it('writes the ids the parser assigned, keeping CRLF and the missing final newline', async () => {
    const text =
      '---\r\nreview: false\r\n---\r\n- [ ] T-3 Three\r\n- [ ] Fix the login form\r\n  details\r\n- [x]\tDone already';
    await writeFile(file, text);
    const { missingIds } = parseBacklog(text, file);
    expect(missingIds.map((m) => m.id)).toEqual(['T-4', 'T-5']);
    expect(await addIds(new FsBacklogFile(file), missingIds)).toEqual(['T-4', 'T-5']);
    expect(await read()).toBe(text.replace('- [ ] Fix', '- [ ] T-4 Fix').replace('- [x]\tDone', '- [x]\tT-5 Done'));
    expect(parseBacklog(await read(), file).missingIds).toEqual([]);
    expect(await readdir(dir)).toEqual(['BACKLOG.md']);
  });

  it('keeps a person’s edit made between parse and write, finding items by title', async () => {
    const text = '- [ ] Alpha\n- [ ] Beta\n';
    await writeFile(file, text);
    const { missingIds } = parseBacklog(text, file);
    // Meanwhile: a new item on top, Alpha retitled, Beta moved down.
    await writeFile(file, '- [ ] Urgent\n- [ ] Alpha, but better\n\nText.\n\n- [ ] Beta\n');
    expect(await addIds(new FsBacklogFile(file), missingIds)).toEqual(['T-2']);
    expect(await read()).toBe('- [ ] Urgent\n- [ ] Alpha, but better\n\nText.\n\n- [ ] T-2 Beta\n');
  });

  it('picks the same-titled item nearest the remembered line, and skips an id already in use', async () => {
    const text = '- [ ] Same\n- [ ] T-9 Other\n- [ ] Same\n';
    await writeFile(file, text);
    const { missingIds } = parseBacklog(text, file);
    expect(missingIds).toEqual([
      { line: 1, id: 'T-10', title: 'Same' },
      { line: 3, id: 'T-11', title: 'Same' },
    ]);
    await writeFile(file, '- [ ] T-11 Taken by hand\n- [ ] Same\n- [ ] T-9 Other\n- [ ] Same\n');
    expect(await addIds(new FsBacklogFile(file), missingIds)).toEqual(['T-10']);
    expect(await read()).toBe('- [ ] T-11 Taken by hand\n- [ ] T-10 Same\n- [ ] T-9 Other\n- [ ] Same\n');
  });

  it('does nothing when the items are gone', async () => {
    await writeFile(file, '- [ ] Alpha\n');
    const { missingIds } = parseBacklog(await read(), file);
    await writeFile(file, '- [ ] T-1 Alpha\n');
    let writes = 0;
    expect(await addIds(new FsBacklogFile(file), missingIds, { onWrite: () => writes++ })).toEqual([]);
    expect(writes).toBe(0);
  });

  it('ignores look-alike items in comments and code', async () => {
    const text = '<!--\n- [ ] Alpha\n-->\n```\n- [ ] Alpha\n```\n- [ ] Alpha\n';
    await writeFile(file, text);
    await addIds(new FsBacklogFile(file), parseBacklog(text, file).missingIds);
    expect(await read()).toBe('<!--\n- [ ] Alpha\n-->\n```\n- [ ] Alpha\n```\n- [ ] T-1 Alpha\n');
  });
});

describe('a save that lands while loopfleet writes', () => {
  it('is kept: the edit is redone on the saved text', async () => {
    const backlog = new FakeBacklogFile('- [ ] T-1 One\n- [ ] T-2 Two\n');
    backlog.beforeReplace = () => backlog.save('- [ ] T-0 Zero\n- [ ] T-1 One\n- [ ] T-2 Two, reworded\n');
    const seen: string[] = [];
    expect(await tickDone(backlog, 'T-2', { onWrite: (_before, after) => seen.push(after) })).toBe(true);
    expect(backlog.text).toBe('- [ ] T-0 Zero\n- [ ] T-1 One\n- [x] T-2 Two, reworded\n');
    expect(backlog.writes).toBe(1);
    expect(seen).toEqual([backlog.text]);
  });

  it('that keeps changing makes the edit fail with the file named, never overwrite it', async () => {
    const backlog = new FakeBacklogFile('- [ ] Alpha\n');
    const missing = parseBacklog('- [ ] Alpha\n', backlog.path).missingIds;
    let n = 0;
    const replace = backlog.replace.bind(backlog);
    backlog.replace = (expected, content) => {
      backlog.save(`- [ ] Alpha\n<!-- save ${++n} -->\n`);
      return replace(expected, content);
    };
    await expect(addIds(backlog, missing)).rejects.toThrow('/repo/BACKLOG.md kept changing');
    expect(backlog.text).toBe(`- [ ] Alpha\n<!-- save ${n} -->\n`);
    expect(backlog.writes).toBe(0);
  });
});
