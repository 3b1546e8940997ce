import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openExchanges } from '../../src/commands/exchanges.js';
import type { Backlog, TaskSpec } from '../../src/domain/types.js';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'loopfleet-exchanges-'));
});
afterAll(() => rm(root, { recursive: true, force: true }));

function task(id: string, title: string): TaskSpec {
  return { id, title, line: 1, done: false, description: '', after: [], files: [] };
}

function backlogOf(...tasks: TaskSpec[]): Backlog {
  return { path: 'BACKLOG.md', config: {} as Backlog['config'], tasks };
}

describe('--record and --replay folders', () => {
  it('records into a new or empty folder only, and writes the manifest only at start', async () => {
    const used = join(root, 'used');
    await mkdir(used);
    await writeFile(join(used, 'notes.txt'), 'mine');
    await expect(openExchanges({ mode: 'record', dir: used }, backlogOf())).rejects.toThrow(
      /--record .*used: the folder is not empty; give a new or empty folder/,
    );
    await writeFile(join(root, 'file'), '');
    await expect(openExchanges({ mode: 'record', dir: join(root, 'file') }, backlogOf())).rejects.toThrow(
      /not a folder/,
    );
    const fresh = join(root, 'fresh');
    const exchanges = await openExchanges({ mode: 'record', dir: fresh }, backlogOf(task('T-1', 'One')));
    await expect(readFile(join(fresh, 'manifest.json'))).rejects.toThrow(/ENOENT/);
    await exchanges.start();
    expect(JSON.parse(await readFile(join(fresh, 'manifest.json'), 'utf8')).tasks[0].id).toBe('T-1');
  });

  it('replays only the recorded backlog, naming the task that differs', async () => {
    await expect(openExchanges({ mode: 'replay', dir: root }, backlogOf())).rejects.toThrow(
      /--replay .*: .*holds no manifest\.json: it is not a recorded run/,
    );
    const dir = join(root, 'recorded');
    await (await openExchanges({ mode: 'record', dir }, backlogOf(task('T-1', 'One'), task('T-2', 'Two')))).start();
    await expect(
      openExchanges({ mode: 'replay', dir }, backlogOf(task('T-1', 'One'), task('T-2', 'Two'))),
    ).resolves.toBeDefined();
    for (const [tasks, why] of [
      [[task('T-1', 'One'), task('T-2', 'Twenty')], /T-2 changed since the recording/],
      [[task('T-1', 'One')], /T-2 was recorded but is not in the backlog/],
      [[task('T-1', 'One'), task('T-2', 'Two'), task('T-3', 'Three')], /T-3 is not in the recording/],
    ] as const) {
      await expect(openExchanges({ mode: 'replay', dir }, backlogOf(...tasks))).rejects.toThrow(why);
    }
  });
});

describe('the command line', () => {
  it('takes --record or --replay with `loopfleet --overnight` only, one of them, with a folder', async () => {
    const { main } = await import('../../src/cli.js');
    const said: string[] = [];
    const out = (line: string) => said.push(line);
    await expect(main(['--record', 'x'], out)).rejects.toThrow(/--record is an option of `loopfleet --overnight` only/);
    await expect(main(['--watch', '--replay', 'x'], out)).rejects.toThrow(
      /--replay is an option of `loopfleet --overnight` only/,
    );
    await expect(main(['status', '--overnight', '--replay', 'x'], out)).rejects.toThrow(/--overnight is not an option/);
    await expect(main(['--overnight', '--record', 'x', '--replay', 'y'], out)).rejects.toThrow(/choose one/);
    await expect(main(['--overnight', '--record', ' '], out)).rejects.toThrow(/--record needs a folder/);
    expect(said).toEqual([]);
  });
});
