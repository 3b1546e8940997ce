import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { UsageError } from '../../domain/errors.js';
import { MAX_TIMER_MS } from '../../domain/layout.js';

/**
 * The `OTEL_*` values the SDK would act on, read and checked before it is loaded, so that a value it cannot
 * use is refused (a UsageError: exit 2, nothing started) or adjusted with a notice — never an exception out
 * of the SDK's constructors mid-start, nor a timer the SDK sets to something the value did not mean.
 *
 * Refused: a time or size that is not a positive number, a time past what a Node timer holds (about 24.8
 * days: Node would fire it after 1 ms), a metric export timeout above the interval when both are set (the
 * SDK throws), an unknown compression or temporality, a header list entry without `=`, a resource
 * attribute list the SDK would drop whole, a certificate or key file that cannot be read. Adjusted, with a notice: a metric timeout left at its default above a
 * shorter interval (lowered to it), a span batch larger than the span queue (lowered to it), an unknown
 * `OTEL_LOG_LEVEL` (warnings), an `OTEL_SDK_DISABLED` that is neither true nor false (on).
 *
 * Invariant: a message names the variable and, for a header list, the entry's position — never a value
 * that may be a credential.
 */

export interface OtelTuning {
  metricIntervalMs: number;
  metricTimeoutMs: number;
  spanDelayMs: number;
  spanTimeoutMs: number;
  spanQueueSize: number;
  spanBatchSize: number;
}

const DEFAULTS: OtelTuning = {
  metricIntervalMs: 60_000,
  metricTimeoutMs: 30_000,
  spanDelayMs: 5000,
  spanTimeoutMs: 30_000,
  spanQueueSize: 2048,
  spanBatchSize: 512,
};

const SIGNALS = ['', 'TRACES_', 'METRICS_'] as const;
const LOG_LEVELS = ['NONE', 'ERROR', 'WARN', 'INFO', 'DEBUG', 'VERBOSE', 'ALL'];

function raw(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const v = env[name]?.trim();
  return v === undefined || v === '' ? undefined : v;
}

/** A positive time in ms that a timer holds; undefined when unset. */
function time(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const v = raw(env, name);
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new UsageError(`${name}=${v}: expected a positive number of milliseconds`);
  if (n > MAX_TIMER_MS)
    throw new UsageError(`${name}=${v}: at most ${MAX_TIMER_MS} milliseconds (about 24.8 days) is kept by a timer`);
  return n;
}

/** A positive whole count; undefined when unset. */
function count(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const v = raw(env, name);
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n <= 0) throw new UsageError(`${name}=${v}: expected a positive whole number`);
  return n;
}

function oneOf(env: NodeJS.ProcessEnv, name: string, allowed: readonly string[]): void {
  const v = raw(env, name);
  if (v !== undefined && !allowed.includes(v.toLowerCase()))
    throw new UsageError(`${name}=${v}: expected ${allowed.join(' or ')}`);
}

/** `key=value,…` (W3C baggage form); the values are never shown. */
function headers(env: NodeJS.ProcessEnv, name: string): void {
  const v = raw(env, name);
  if (v === undefined) return;
  v.split(',').forEach((entry, i) => {
    if (entry.trim() === '') return;
    const eq = entry.indexOf('=');
    if (eq <= 0 || entry.slice(0, eq).trim() === '')
      throw new UsageError(`${name}: entry ${i + 1} is not key=value (the list is key=value,key=value)`);
  });
}

/** `key=value,…` percent-encoded, each at most 255 characters decoded: else the SDK drops the whole resource list. */
function resourceAttributes(env: NodeJS.ProcessEnv): void {
  const name = 'OTEL_RESOURCE_ATTRIBUTES';
  const v = raw(env, name);
  if (v === undefined) return;
  v.split(',').forEach((entry, i) => {
    if (entry.trim() === '') return;
    const parts = entry.split('=');
    const where = `${name}: entry ${i + 1}`;
    if (parts.length !== 2 || (parts[0] ?? '').trim() === '')
      throw new UsageError(`${where} is not key=value (percent-encode ',' and '=' inside keys and values)`);
    for (const part of parts) {
      let decoded: string;
      try {
        decoded = decodeURIComponent(part.trim());
      } catch {
        throw new UsageError(`${where} is not valid percent-encoding`);
      }
      if (decoded.length > 255) throw new UsageError(`${where} has a key or value longer than 255 characters`);
    }
  });
}

function readable(env: NodeJS.ProcessEnv, name: string): void {
  const v = raw(env, name);
  if (v === undefined) return;
  try {
    readFileSync(resolve(v));
  } catch (error) {
    throw new UsageError(`${name}: cannot read ${v} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

/** The checked values, and what was adjusted (said once at start); a UsageError for what cannot be used. */
export function otelTuning(env: NodeJS.ProcessEnv): { tuning: OtelTuning; notices: string[] } {
  const notices: string[] = [];
  for (const s of SIGNALS) {
    time(env, `OTEL_EXPORTER_OTLP_${s}TIMEOUT`);
    oneOf(env, `OTEL_EXPORTER_OTLP_${s}COMPRESSION`, ['gzip', 'none']);
    headers(env, `OTEL_EXPORTER_OTLP_${s}HEADERS`);
    for (const file of ['CERTIFICATE', 'CLIENT_CERTIFICATE', 'CLIENT_KEY'])
      readable(env, `OTEL_EXPORTER_OTLP_${s}${file}`);
  }
  oneOf(env, 'OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE', ['cumulative', 'delta', 'lowmemory']);
  resourceAttributes(env);
  const disabled = raw(env, 'OTEL_SDK_DISABLED');
  if (disabled !== undefined && !['true', 'false'].includes(disabled.toLowerCase()))
    notices.push(`OTEL_SDK_DISABLED=${disabled} is neither true nor false: telemetry stays on`);
  const level = raw(env, 'OTEL_LOG_LEVEL');
  if (level !== undefined && !LOG_LEVELS.includes(level.toUpperCase()))
    notices.push(`OTEL_LOG_LEVEL=${level} is none of ${LOG_LEVELS.join(', ')}: the SDK says warnings`);

  const interval = time(env, 'OTEL_METRIC_EXPORT_INTERVAL');
  const timeout = time(env, 'OTEL_METRIC_EXPORT_TIMEOUT');
  const metricIntervalMs = interval ?? DEFAULTS.metricIntervalMs;
  let metricTimeoutMs = timeout ?? DEFAULTS.metricTimeoutMs;
  if (metricTimeoutMs > metricIntervalMs) {
    if (timeout !== undefined)
      throw new UsageError(
        `OTEL_METRIC_EXPORT_TIMEOUT=${timeout} is longer than OTEL_METRIC_EXPORT_INTERVAL=${metricIntervalMs}: an export must end before the next one starts`,
      );
    notices.push(
      `OTEL_METRIC_EXPORT_INTERVAL=${metricIntervalMs}: the metric export timeout (${metricTimeoutMs} ms by default) is lowered to ${metricIntervalMs} ms`,
    );
    metricTimeoutMs = metricIntervalMs;
  }

  const spanQueueSize = count(env, 'OTEL_BSP_MAX_QUEUE_SIZE') ?? DEFAULTS.spanQueueSize;
  let spanBatchSize = count(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE') ?? DEFAULTS.spanBatchSize;
  if (spanBatchSize > spanQueueSize) {
    notices.push(
      `OTEL_BSP_MAX_EXPORT_BATCH_SIZE (${spanBatchSize}) is larger than OTEL_BSP_MAX_QUEUE_SIZE (${spanQueueSize}): batches of ${spanQueueSize} spans are sent`,
    );
    spanBatchSize = spanQueueSize;
  }
  return {
    tuning: {
      metricIntervalMs,
      metricTimeoutMs,
      spanDelayMs: time(env, 'OTEL_BSP_SCHEDULE_DELAY') ?? DEFAULTS.spanDelayMs,
      spanTimeoutMs: time(env, 'OTEL_BSP_EXPORT_TIMEOUT') ?? DEFAULTS.spanTimeoutMs,
      spanQueueSize,
      spanBatchSize,
    },
    notices,
  };
}
