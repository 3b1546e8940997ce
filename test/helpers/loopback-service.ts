import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';

/**
 * A list of cleanups run after each test, last added first (a server before the folder it serves). Call
 * once, at the top of a test file.
 */
export function cleanupsAfterEach(): Array<() => Promise<void>> {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  return cleanups;
}

/**
 * A real HTTP service on 127.0.0.1 (a random port) that tells `record` the URL of each request and answers
 * `body`: what a sandboxed process could and could not reach. Closed by `cleanups`; returns its port.
 */
export async function loopbackService(
  cleanups: Array<() => Promise<void>>,
  record: (url: string) => void,
  body: string,
): Promise<number> {
  const server = createServer((req, res) => {
    record(req.url ?? '');
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return (server.address() as AddressInfo).port;
}
