import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';
import { OtlpReceiver } from './otlp-receiver.js';

function clearOtel(): void {
  for (const key of Object.keys(process.env)) if (key.startsWith('OTEL_')) delete process.env[key];
}

export interface OtelTestEnv {
  /** closed after each test, in order (a fleet harness may push its own) */
  cleanups: Array<() => Promise<void>>;
  /** A real OTLP receiver on 127.0.0.1; `endpoint`: set OTEL_EXPORTER_OTLP_ENDPOINT to it. */
  receiver(options?: { endpoint?: boolean }): Promise<OtlpReceiver>;
  /** A collector of our own on 127.0.0.1 that answers with `handler` (one that refuses, or never answers); its base URL. */
  collector(handler: RequestListener): Promise<string>;
}

/**
 * For a test file that turns the OpenTelemetry SDK on. The SDK reads its settings from process.env (each
 * test file runs in a process of its own): the file starts with no OTEL_* variable, whatever the outer
 * environment has, each test sets what it needs, and after each one what it started is closed and the
 * variables are cleared again. Call once, at the top of the file.
 */
export function otelTestEnv(): OtelTestEnv {
  clearOtel();
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c();
    clearOtel();
  });
  return {
    cleanups,
    async receiver({ endpoint = false } = {}) {
      const r = await OtlpReceiver.start();
      cleanups.push(() => r.close());
      if (endpoint) process.env.OTEL_EXPORTER_OTLP_ENDPOINT = r.url;
      return r;
    },
    async collector(handler) {
      const server = createServer(handler);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      cleanups.push(async () => {
        // a collector that never answers holds its connections open: they end with the test
        server.closeAllConnections();
        await new Promise((resolve) => server.close(() => resolve(undefined)));
      });
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
  };
}
