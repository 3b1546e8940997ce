/**
 * A fleet spread over processes, for the workers tests: a real redis-server, the loopback model server,
 * a real bare remote, a coordinator (`loopfleet --overnight --queue`) and workers (`loopfleet worker`),
 * each process in a folder of its own, all from the built CLI.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { demoScript } from '../../src/demo/scripts.js';
import { startModelServer, type RunningModelServer } from '../../src/demo/model-server.js';
import type { Script } from '../../src/demo/script-types.js';
import type { StateData } from '../../src/ports/state-store.js';
import { backlog } from './fleet-harness.js';
import { git, makeRepo } from './git-repo.js';
import { readState } from './state-file.js';
import { startRedis, type RedisServer } from './redis-server.js';
import { CLI } from './paths.js';
import { TEST_SECRET } from './fleet-secret.js';

export { CLI };
const KEY = 'workers-test-key';

export interface Proc {
  name: string;
  child: ResultPromise<{ all: true; reject: false }>;
  /** everything it printed so far */
  output(): string;
  /** resolves once a line matching `pattern` was printed (or rejects when the process ended first) */
  printed(pattern: RegExp): Promise<void>;
}

function track(name: string, child: ResultPromise<{ all: true; reject: false }>): Proc {
  let text = '';
  const waiters: Array<{ pattern: RegExp; resolve: () => void }> = [];
  child.all.setEncoding('utf8');
  child.all.on('data', (chunk: string) => {
    text += chunk;
    for (const w of waiters.splice(0)) {
      if (w.pattern.test(text)) w.resolve();
      else waiters.push(w);
    }
  });
  return {
    name,
    child,
    output: () => text,
    printed: (pattern) =>
      new Promise<void>((resolve, reject) => {
        if (pattern.test(text)) return resolve();
        waiters.push({ pattern, resolve });
        void child.then(() => {
          if (!pattern.test(text))
            reject(new Error(`${name} ended without printing ${pattern}:\n${text.slice(-3000)}`));
        });
      }),
  };
}

export interface Fleet {
  redis: RedisServer;
  model: RunningModelServer;
  root: string;
  remote: string;
  env: NodeJS.ProcessEnv;
  coordinator(args?: string[]): Proc;
  worker(name: string, args?: string[], env?: NodeJS.ProcessEnv): Promise<Proc>;
  state(): Promise<StateData | null>;
  /** polls the coordinator's state file (another process writes it) until `ok`, within `ms` */
  until(what: string, ok: (s: StateData) => boolean, ms?: number): Promise<StateData>;
  close(): Promise<void>;
}

export async function startFleet(opts: {
  ids: string[];
  script: Script;
  front?: string;
  env?: NodeJS.ProcessEnv;
  files?: Record<string, string>;
}): Promise<Fleet> {
  const redis = await startRedis();
  const model = await startModelServer({ apiKeys: [KEY], script: opts.script });
  const dir = await mkdtemp(join(tmpdir(), 'loopfleet-workers-'));
  const remote = join(dir, 'remote.git');
  await execa('git', ['init', '--bare', '--quiet', '--initial-branch=main', remote]);
  const front = opts.front ?? 'check: test -n "$(ls T-*.txt)"\nconcurrency: 4';
  const repo = await makeRepo({
    ...opts.files,
    'BACKLOG.md': backlog(front, opts.ids.map((id) => `- [ ] ${id} Write ${id}.txt`).join('\n')),
  });
  await git(repo.root, 'remote', 'add', 'origin', remote);
  await git(repo.root, 'push', '--quiet', 'origin', 'main');
  const env = {
    ...process.env,
    ANTHROPIC_BASE_URL: model.url,
    ANTHROPIC_API_KEY: KEY,
    LOOPFLEET_QUEUE_SECRET: TEST_SECRET,
    ...opts.env,
  };
  const procs: Proc[] = [];
  const fleet: Fleet = {
    redis,
    model,
    root: repo.root,
    remote,
    env,
    coordinator(args = ['--overnight']) {
      const p = track(
        'coordinator',
        execa(process.execPath, [CLI, ...args, '--queue', redis.url], {
          cwd: repo.root,
          env,
          all: true,
          reject: false,
        }),
      );
      procs.push(p);
      return p;
    },
    async worker(name, args = [], extra = {}) {
      const home = join(dir, name);
      await mkdir(home, { recursive: true });
      const child = execa(
        process.execPath,
        [
          CLI,
          'worker',
          '--queue',
          redis.url,
          '--remote',
          remote,
          '--cache',
          join(home, 'cache'),
          '--lock-timeout',
          '3s',
          ...args,
        ],
        {
          cwd: home,
          env: { ...env, HOME: home, ...extra },
          all: true,
          reject: false,
        },
      );
      const p = track(name, child);
      procs.push(p);
      await p.printed(/(taking jobs|refusing jobs until)/);
      // Its heartbeat is in Redis (another process's state: polled) before the test goes on.
      const id = /worker (\S+) on/.exec(p.output())![1]!;
      for (
        const deadline = Date.now() + 15_000;
        (await redis.command('EXISTS', `lf:loopfleet:worker:${id}`)) !== ':1\r\n';
      ) {
        if (Date.now() > deadline) throw new Error(`${name}'s heartbeat never reached Redis:\n${p.output()}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      return p;
    },
    state: async () => {
      try {
        return (await readState(repo.root)) as StateData;
      } catch {
        return null;
      }
    },
    async until(what, ok, ms = 60_000) {
      const deadline = Date.now() + ms;
      for (;;) {
        const s = await fleet.state();
        if (s !== null && ok(s)) return s;
        if (Date.now() > deadline)
          throw new Error(
            `timed out waiting for ${what}; coordinator said:\n${procs
              .find((p) => p.name === 'coordinator')
              ?.output()
              .slice(-3000)}`,
          );
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async close() {
      for (const p of procs) p.child.kill('SIGKILL');
      await Promise.all(procs.map((p) => p.child));
      await model.close();
      await redis.close();
      await repo.cleanup();
      await rm(dir, { recursive: true, force: true });
    },
  };
  return fleet;
}

/** a promise with its resolver, to order a test's steps on what happened rather than on time */
export function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** `script`, with the first implementer call for `taskId` held until `release` settles; `reached` resolves when it arrives */
export function holdFirstImplementer(script: Script, taskId: string) {
  const reached = deferred();
  const release = deferred();
  let held = false;
  const wrapped: Script = async (req) => {
    if (!held && req.role === 'implementer' && req.taskId === taskId) {
      held = true;
      reached.resolve();
      await release.promise;
    }
    return script(req);
  };
  return { script: wrapped, reached: reached.promise, release: release.resolve };
}

export const pass = (ids: string[]) =>
  demoScript(
    ids.map((id) => ({ taskId: id, kind: 'pass' as const, edits: [{ path: `${id}.txt`, content: `${id}\n` }] })),
    { chunkDelayMs: 5, delayMs: 10 },
  );
