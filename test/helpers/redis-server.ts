/**
 * A real redis-server on a free loopback port, for one test. `stop({ save: true })` writes its data to its
 * own folder first, so `start()` again on the same port brings the same data back (an outage, not a wipe).
 *
 * Invariant: `start()` resolves only once the server answers PING; `stop()` only once the process exited.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { execa, type ResultPromise } from 'execa';

const REDIS = '/usr/bin/redis-server';
const READY_DEADLINE_MS = 10_000;

export interface RedisServer {
  port: number;
  url: string;
  start(): Promise<void>;
  stop(options?: { save?: boolean }): Promise<void>;
  /** one command over a fresh connection (RESP inline), the raw reply */
  command(...args: string[]): Promise<string>;
  /** freezes the server (SIGSTOP): connections stay open, nothing is answered; `resume` thaws it (SIGCONT) */
  pause(): void;
  resume(): void;
  /** stops the server and removes its folder */
  close(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function encode(args: string[]): string {
  return `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;
}

/** Sends one command, resolves with what the server answered before it closed or went quiet after a reply. */
function send(port: number, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let reply = '';
    socket.setEncoding('utf8');
    socket.once('connect', () => socket.write(encode(args)));
    socket.on('data', (chunk: string) => {
      reply += chunk;
      if (reply.endsWith('\r\n') && completeReply(reply)) {
        socket.end();
        resolve(reply);
      }
    });
    socket.once('error', reject);
    socket.once('close', () => resolve(reply));
  });
}

/** whether `text` holds one whole RESP2 reply (simple, error, integer, bulk; arrays of those) */
function completeReply(text: string): boolean {
  let i = 0;
  const line = (): string | null => {
    const end = text.indexOf('\r\n', i);
    if (end < 0) return null;
    const s = text.slice(i, end);
    i = end + 2;
    return s;
  };
  const one = (): boolean => {
    const head = line();
    if (head === null) return false;
    const kind = head[0];
    if (kind === '+' || kind === '-' || kind === ':') return true;
    const n = Number(head.slice(1));
    if (kind === '$') {
      if (n < 0) return true;
      if (Buffer.byteLength(text.slice(i)) < n + 2) return false;
      i += n + 2;
      return true;
    }
    if (kind === '*') {
      for (let k = 0; k < n; k++) if (!one()) return false;
      return true;
    }
    return true;
  };
  return one();
}

export async function startRedis(): Promise<RedisServer> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'loopfleet-redis-'));
  const port = await freePort();
  let child: ResultPromise | null = null;

  const start = async () => {
    if (child !== null) throw new Error(`redis-server on port ${port} runs already`);
    const args = [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
      '--dbfilename',
      'dump.rdb',
    ];
    const proc = execa(REDIS, args, { reject: false, stdin: 'ignore', all: true, buffer: { all: true } });
    child = proc;
    let exited = false;
    void proc.then(() => (exited = true));
    // The process's observable state: it answers PING once it listens and has loaded its data. Polled with
    // a deadline because a separate process gives no other signal.
    const deadline = Date.now() + READY_DEADLINE_MS;
    for (;;) {
      if (exited) throw new Error(`redis-server exited before it answered: ${String((await proc).all).slice(-500)}`);
      const reply = await send(port, ['PING']).catch(() => '');
      if (reply.startsWith('+PONG')) return;
      if (Date.now() > deadline) {
        proc.kill('SIGKILL');
        throw new Error(`redis-server on port ${port} did not answer PING within ${READY_DEADLINE_MS} ms`);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  const stop = async (options: { save?: boolean } = {}) => {
    const proc = child;
    if (proc === null) return;
    child = null;
    // SHUTDOWN SAVE writes dump.rdb even though --save '' turned periodic saves off.
    await send(port, ['SHUTDOWN', options.save === true ? 'SAVE' : 'NOSAVE']).catch(() => '');
    const exit = await Promise.race([proc, new Promise<null>((r) => setTimeout(() => r(null), 5_000))]);
    if (exit === null) {
      proc.kill('SIGKILL');
      await proc;
    }
  };

  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    start,
    stop,
    command: (...args) => send(port, args),
    pause: () => {
      if (child === null || !child.kill('SIGSTOP')) throw new Error(`redis-server on port ${port} is not running`);
    },
    resume: () => {
      if (child === null || !child.kill('SIGCONT')) throw new Error(`redis-server on port ${port} is not running`);
    },
    close: async () => {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
