import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  EXCHANGE_VERSION,
  type Exchange,
  type ExchangeKey,
  exchangeName,
  writeRecord,
} from '../../../src/adapters/model/exchange-file.js';
import {
  type IdentifyRequest,
  RecordingModelClient,
  ReplayModelClient,
} from '../../../src/adapters/model/recorded-model.js';
import { attemptMarker, attemptOf, taskMarker, taskOf } from '../../../src/core/roles/marker.js';
import { GateError } from '../../../src/domain/errors.js';
import type { Role } from '../../../src/domain/types.js';
import type { AgentEvent, AgentRequest } from '../../../src/ports/model.js';
import { FakeModel } from '../../helpers/fake-model.js';
import { git, makeRepo } from '../../helpers/git-repo.js';

const identify: IdentifyRequest = (r) => {
  const task = taskOf(r.prompt);
  return task === null ? null : { task, attempt: attemptOf(r.prompt) };
};

let root: string;
const cleanups: Array<() => Promise<void>> = [];
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'loopfleet-recorded-'));
  cleanups.push(() => rm(root, { recursive: true, force: true }));
});
afterAll(async () => {
  for (const c of cleanups) await c();
});

let n = 0;
async function folder(): Promise<string> {
  const dir = join(root, `rec-${++n}`);
  await mkdir(dir);
  return dir;
}

async function worktree(): Promise<string> {
  const repo = await makeRepo({ 'README.md': 'hello\n' });
  cleanups.push(repo.cleanup);
  return repo.root;
}

/** One worktree for the refusals: each of them asserts it wrote nothing, so they can share it. */
let clean: Promise<string> | null = null;
function untouched(): Promise<string> {
  clean ??= worktree();
  return clean;
}

function request(workdir: string, role: Role, task = 'T-1', extra: Partial<AgentRequest> = {}): AgentRequest {
  return {
    role,
    model: 'claude-sonnet-5-5',
    system: 'system',
    prompt: `${taskMarker(task)}\n${attemptMarker(1)}\n\n# Task ${task}: Say hello\n\n## Plan\n\nwhatever`,
    workdir,
    access: role === 'implementer' ? 'write' : 'read-only',
    shell: false,
    env: {},
    maxTurns: 5,
    maxTokens: 1000,
    signal: new AbortController().signal,
    beforeCall: () => {},
    timeoutMs: 60_000,
    ...extra,
  };
}

function exchange(key: ExchangeKey, patch = '', access: 'read-only' | 'write' = 'write'): Exchange {
  return {
    version: EXCHANGE_VERSION,
    key,
    request: {
      model: 'claude-sonnet-5-5',
      access,
      task: `${taskMarker(key.task)}\n${attemptMarker(1)}\n\n# Task ${key.task}: Say hello`,
    },
    steps: [
      { type: 'call' },
      { type: 'usage', usage: { input: 10, output: 5, cacheWrite: 0, cacheRead: 0 }, model: 'm' },
    ],
    result: { text: 'done', turns: 1, stopReason: 'end_turn' },
    failure: null,
    patch,
  };
}

const KEY: ExchangeKey = { task: 'T-1', attempt: 1, role: 'implementer', seq: 1 };

const traversal = [
  'diff --git a/../outside.txt b/../outside.txt',
  'new file mode 100644',
  'index 0000000..ce01362',
  '--- /dev/null',
  '+++ b/../outside.txt',
  '@@ -0,0 +1 @@',
  '+escaped',
  '',
].join('\n');

describe('a recording a replay refuses (hostile or tampered files)', () => {
  it('refuses an exchange file that is a link, even to a valid recording', async () => {
    const dir = await folder();
    const elsewhere = await folder();
    await writeRecord(elsewhere, exchangeName(KEY), exchange(KEY));
    await symlink(join(elsewhere, exchangeName(KEY)), join(dir, exchangeName(KEY)));
    const replay = new ReplayModelClient(dir, identify);
    await expect(replay.runAgent(request(await untouched(), 'implementer'), () => {})).rejects.toThrow(
      /T-1\.a1\.implementer\.1\.json is a link: refused/,
    );
  });

  it('refuses a file over the size cap without reading it', async () => {
    const dir = await folder();
    const file = join(dir, exchangeName(KEY));
    await writeFile(file, '');
    await truncate(file, 40_000_000); // sparse: no 40 MB written
    const replay = new ReplayModelClient(dir, identify);
    await expect(replay.runAgent(request(await untouched(), 'implementer'), () => {})).rejects.toThrow(
      /is 40 MB, over the 32 MB a recording file may be/,
    );
  });

  it('refuses a change that leads out of the worktree or into .git, and writes nothing', async () => {
    const wt = await untouched();
    for (const [patch, why] of [
      [traversal, /\.\.\/outside\.txt: leads out of the worktree/],
      [traversal.replaceAll('../outside.txt', '.git/hooks/post-checkout'), /inside \.git/],
      [traversal.replaceAll('../outside.txt', '/tmp/abs.txt'), /leads out|absolute/],
    ] as const) {
      const dir = await folder();
      await writeRecord(dir, exchangeName(KEY), exchange(KEY, patch));
      const replay = new ReplayModelClient(dir, identify);
      await expect(replay.runAgent(request(wt, 'implementer'), () => {})).rejects.toThrow(why);
    }
    expect(existsSync(join(wt, '..', 'outside.txt'))).toBe(false);
    expect(existsSync(join(wt, '.git', 'hooks', 'post-checkout'))).toBe(false);
  });

  it('refuses a task id that would name a path, a file holding another key, a file that is no recording', async () => {
    expect(() => exchangeName({ ...KEY, task: '../../etc/passwd' })).toThrow(/cannot name a recording file/);
    expect(() => exchangeName({ ...KEY, task: '..' })).toThrow(/cannot name a recording file/);
    const dir = await folder();
    // T-2's exchange renamed as T-1's
    await writeFile(join(dir, exchangeName(KEY)), JSON.stringify(exchange({ ...KEY, task: 'T-2' })));
    const wt = await untouched();
    await expect(new ReplayModelClient(dir, identify).runAgent(request(wt, 'implementer'), () => {})).rejects.toThrow(
      /holds T-2 attempt 1, implementer run 1, not T-1 attempt 1, implementer run 1/,
    );
    const bad = await folder();
    await writeFile(join(bad, exchangeName(KEY)), JSON.stringify({ ...exchange(KEY), steps: [{ type: 'exec' }] }));
    await expect(new ReplayModelClient(bad, identify).runAgent(request(wt, 'implementer'), () => {})).rejects.toThrow(
      /is not a recording: steps\.0/,
    );
  });

  it('refuses a read-only role whose recording changes the worktree', async () => {
    const dir = await folder();
    const key: ExchangeKey = { ...KEY, role: 'explorer' };
    const patch = traversal.replaceAll('../outside.txt', 'planted.txt');
    await writeRecord(dir, exchangeName(key), exchange(key, patch, 'read-only'));
    const wt = await untouched();
    await expect(new ReplayModelClient(dir, identify).runAgent(request(wt, 'explorer'), () => {})).rejects.toThrow(
      /explorer run 1 is read-only but its recording changes the worktree/,
    );
    expect(existsSync(join(wt, 'planted.txt'))).toBe(false);
  });

  it('says which task, attempt, role and run a request differs at, or is missing from the recording', async () => {
    const dir = await folder();
    await writeRecord(dir, exchangeName(KEY), exchange(KEY));
    const wt = await untouched();
    const changed = request(wt, 'implementer', 'T-1', {
      prompt: `${taskMarker('T-1')}\n${attemptMarker(1)}\n\n# Task T-1: Say goodbye\n\n## Plan`,
    });
    await expect(new ReplayModelClient(dir, identify).runAgent(changed, () => {})).rejects.toThrow(
      /replay: T-1 attempt 1, implementer run 1 asks for something else than the recording: the task text/,
    );
    const model = request(wt, 'implementer', 'T-1', { model: 'claude-opus-5' });
    await expect(new ReplayModelClient(dir, identify).runAgent(model, () => {})).rejects.toThrow(
      /model claude-sonnet-5-5 → claude-opus-5/,
    );
    await expect(new ReplayModelClient(dir, identify).runAgent(request(wt, 'verifier'), () => {})).rejects.toThrow(
      /has no T-1 attempt 1, verifier run 1 \(T-1\.a1\.verifier\.1\.json\)/,
    );
  });

  it('leaves the worktree those refusals shared as it was', async () => {
    expect(await git(await untouched(), 'status', '--porcelain', '--untracked-files=all')).toBe('');
  });

  it('never writes a record over a link planted in the folder', async () => {
    const dir = await folder();
    const target = join(await folder(), 'victim');
    await writeFile(target, 'keep');
    await symlink(target, join(dir, exchangeName(KEY)));
    const inner = new FakeModel(() => ({ edits: { 'hello.txt': 'hello\n' } }));
    const recording = new RecordingModelClient(inner, dir, identify);
    await expect(recording.runAgent(request(await worktree(), 'implementer'), () => {})).rejects.toThrow(/EEXIST/);
    expect(await readFile(target, 'utf8')).toBe('keep');
  });
});

describe('record, then replay with no model', () => {
  it('plays back the events, the worktree change and the answer; a gate trips where it tripped', async () => {
    const dir = await folder();
    const inner = new FakeModel(({ role }) =>
      role === 'implementer'
        ? { edits: { 'hello.txt': 'hello\n', 'src/deep/new.bin': '\u0000\u0001binary' }, text: 'wrote it' }
        : { text: `${role} answer` },
    );
    const recording = new RecordingModelClient(inner, dir, identify);
    const live: AgentEvent[] = [];
    const first = await worktree();
    await recording.runAgent(request(first, 'explorer'), (e) => live.push(e));
    const answer = await recording.runAgent(request(first, 'implementer'), (e) => live.push(e));
    expect(answer.text).toBe('wrote it');

    const replayed: AgentEvent[] = [];
    const second = await worktree();
    const replay = new ReplayModelClient(dir, identify);
    expect((await replay.runAgent(request(second, 'explorer'), (e) => replayed.push(e))).text).toBe('explorer answer');
    expect((await replay.runAgent(request(second, 'implementer'), (e) => replayed.push(e))).text).toBe('wrote it');
    expect(replayed).toEqual(live);
    expect(await readFile(join(second, 'hello.txt'), 'utf8')).toBe('hello\n');
    expect(await readFile(join(second, 'src/deep/new.bin'), 'utf8')).toBe('\u0000\u0001binary');

    // The gates see the recorded calls: a tripped gate stops the replay as it stopped the run.
    const third = await worktree();
    const gate = new GateError('tokens', 'fleet', 'fleet token gate reached');
    const stopped = new ReplayModelClient(dir, identify);
    await expect(
      stopped.runAgent(
        request(third, 'explorer', 'T-1', {
          beforeCall: () => {
            throw gate;
          },
        }),
        () => {},
      ),
    ).rejects.toBe(gate);
  });
});

describe('the task part of a prompt', () => {
  it("is the header up to loopfleet's own first line, so framing, lessons and evidence may change", async () => {
    const { taskPart } = await import('../../../src/adapters/model/recorded-model.js');
    const head = `${taskMarker('T-1')}\n${attemptMarker(1)}\n\n# Task T-1: Say hello\n\nIn /wt/src.`;
    const at = (prompt: string) => taskPart({ ...request('/wt', 'explorer'), prompt });
    expect(at(`${head}\n\nThe task is done when \`npm test\` exits 0.\n\nStudy the repository.`)).toBe(
      `${taskMarker('T-1')}\n${attemptMarker(1)}\n\n# Task T-1: Say hello\n\nIn <worktree>/src.`,
    );
    expect(at(`${head}\n\nThere is no check command: the reviewer decides.`)).toBe(at(`${head}\n\n## Files changed\n`));
    expect(at(`${head}\n\nThe task is done when \`make\` exits 0.`)).toBe(at(`${head}\n\n## Plan`));
  });
});
