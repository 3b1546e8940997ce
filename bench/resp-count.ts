/**
 * A TCP proxy in front of Redis that counts the commands its clients send, for the workers benchmark:
 * the coordinator alone connects through it, so its commands are told from the workers' (Redis 7.0's
 * INFO commandstats counts every client together).
 *
 * A command is a RESP array (`*<n>\r\n` then n bulk strings `$<len>\r\n<bytes>\r\n`), the only form
 * ioredis sends; an inline command (a line not starting with `*`) counts as one too. Payloads are skipped
 * by their length, so a `*` inside a value is never counted.
 */
import net from 'node:net';

/** Counts the commands in one client's stream, across chunks. */
class RespCounter {
  #buffer: Buffer = Buffer.alloc(0);
  /** bulk strings still to skip in the current array, and bytes of the current bulk still to skip */
  #bulks = 0;
  #skip = 0;
  count = 0;

  push(chunk: Buffer): void {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    let at = 0;
    for (;;) {
      if (this.#skip > 0) {
        const take = Math.min(this.#skip, this.#buffer.length - at);
        at += take;
        this.#skip -= take;
        if (this.#skip > 0) break;
        continue;
      }
      const eol = this.#buffer.indexOf('\r\n', at);
      if (eol < 0) break;
      const line = this.#buffer.toString('latin1', at, eol);
      at = eol + 2;
      if (this.#bulks > 0) {
        // `$<len>`: the bulk's bytes and its CRLF follow.
        this.#bulks--;
        this.#skip = Number(line.slice(1)) + 2;
        continue;
      }
      if (line.startsWith('*')) {
        this.count++;
        this.#bulks = Math.max(0, Number(line.slice(1)));
      } else if (line.trim() !== '') this.count++;
    }
    this.#buffer = this.#buffer.subarray(at);
  }
}

export interface CountingProxy {
  url: string;
  /** commands sent through the proxy so far, every connection together */
  commands(): number;
  close(): Promise<void>;
}

/** Listens on a free loopback port and forwards each connection to `target` (host:port of Redis). */
export function countingProxy(targetPort: number): Promise<CountingProxy> {
  const counters: RespCounter[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const counter = new RespCounter();
    counters.push(counter);
    const upstream = net.connect(targetPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    client.on('data', (chunk: Buffer) => {
      counter.push(chunk);
      upstream.write(chunk);
    });
    upstream.pipe(client);
    // Either side closing ends the other; errors are the peer going away (the coordinator exiting).
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      resolve({
        url: `redis://127.0.0.1:${port}`,
        commands: () => counters.reduce((sum, c) => sum + c.count, 0),
        close: () =>
          new Promise<void>((done) => {
            for (const s of sockets) s.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}
