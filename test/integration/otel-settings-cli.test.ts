import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { OtlpReceiver } from '../helpers/otlp-receiver.js';
import { backlog } from '../helpers/fleet-harness.js';
import { makeRepo } from '../helpers/git-repo.js';
import { CLI } from '../helpers/paths.js';

/**
 * `OTEL_*` values the SDK cannot use, given to the built CLI as a person would: each is adjusted with a
 * notice and the run goes on, or refused with exit 2 before anything is written — never an internal error.
 */

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function run(otel: Record<string, string>) {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
  const receiver = await OtlpReceiver.start();
  cleanups.push(() => receiver.close());
  // Nothing to do: the run opens, finds every item done, and ends.
  const repo = await makeRepo({ 'BACKLOG.md': backlog('check: "true"', '- [x] T-1 Done') });
  cleanups.push(repo.cleanup);
  const result = await execa(process.execPath, [CLI, '--overnight'], {
    cwd: repo.root,
    reject: false,
    extendEnv: false,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/root',
      NO_COLOR: '1',
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      ...otel,
    },
  });
  return { result, written: await readdir(repo.root) };
}

describe('OTEL_* values loopfleet cannot use as given', () => {
  it('a metric interval alone, shorter than the default timeout: the timeout follows it, said once, and the run ends 0', {
    timeout: 60_000,
  }, async () => {
    const { result } = await run({ OTEL_METRIC_EXPORT_INTERVAL: '1000' });
    expect(result.stderr).not.toMatch(/internal error/);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr + result.stdout).toMatch(/metric export timeout .* lowered to 1000 ms/);
  });

  it('a span batch larger than the queue is lowered to it with a notice', { timeout: 60_000 }, async () => {
    const { result } = await run({ OTEL_BSP_MAX_QUEUE_SIZE: '100', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '500' });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr + result.stdout).toMatch(/batches of 100 spans/);
  });

  it.each([
    [
      { OTEL_METRIC_EXPORT_INTERVAL: '1000', OTEL_METRIC_EXPORT_TIMEOUT: '5000' },
      /OTEL_METRIC_EXPORT_TIMEOUT=5000 is longer/,
    ],
    [{ OTEL_METRIC_EXPORT_INTERVAL: '0' }, /OTEL_METRIC_EXPORT_INTERVAL=0: expected a positive number/],
    [{ OTEL_METRIC_EXPORT_INTERVAL: '99999999999' }, /OTEL_METRIC_EXPORT_INTERVAL=99999999999: at most/],
    [{ OTEL_BSP_MAX_QUEUE_SIZE: 'lots' }, /OTEL_BSP_MAX_QUEUE_SIZE=lots: expected a positive whole number/],
    [{ OTEL_EXPORTER_OTLP_COMPRESSION: 'zstd' }, /OTEL_EXPORTER_OTLP_COMPRESSION=zstd: expected gzip or none/],
    [
      { OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer s3cret,garbage' },
      /OTEL_EXPORTER_OTLP_HEADERS: entry 2 is not key=value/,
    ],
    [{ OTEL_EXPORTER_OTLP_CERTIFICATE: '/nonexistent/ca.pem' }, /OTEL_EXPORTER_OTLP_CERTIFICATE: cannot read/],
    [{ OTEL_RESOURCE_ATTRIBUTES: 'team=core,oops' }, /OTEL_RESOURCE_ATTRIBUTES: entry 2 is not key=value/],
    [{ OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: 'sometimes' }, /TEMPORALITY_PREFERENCE=sometimes/],
  ])('%j is refused with exit 2, nothing written', { timeout: 60_000 }, async (otel, message) => {
    const { result, written } = await run(otel);
    expect(result.exitCode, result.stderr).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).not.toMatch(/internal error|s3cret/);
    expect(written.sort()).toEqual(['.git', 'BACKLOG.md']);
  });
});
