import { UsageError } from '../../domain/errors.js';

/**
 * When OpenTelemetry is on, read from the standard variables without loading the SDK: a run with none of
 * them set pays for nothing but this check (the SDK is imported only when a signal is on).
 *
 * A signal is on when its endpoint is set — `OTEL_EXPORTER_OTLP_ENDPOINT`, or the signal's own
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` / `..._METRICS_ENDPOINT` — and neither `OTEL_SDK_DISABLED=true` nor
 * `OTEL_TRACES_EXPORTER=none` / `OTEL_METRICS_EXPORTER=none` turns it off. The endpoints, headers, timeouts,
 * compression, certificates, temporality and resource attributes are then read by the SDK itself.
 */
export interface OtelSignals {
  traces: boolean;
  metrics: boolean;
}

const ENDPOINTS = [
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT',
] as const;

function value(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const v = env[name]?.trim();
  return v === undefined || v === '' ? undefined : v;
}

function exporterOff(env: NodeJS.ProcessEnv, name: string): boolean {
  return (value(env, name) ?? 'otlp')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .includes('none');
}

/** Bad input (an endpoint that is not an http(s) URL) → UsageError naming the variable: exit 2 before anything runs. */
export function otelSignals(env: NodeJS.ProcessEnv): OtelSignals {
  for (const name of ENDPOINTS) {
    const url = value(env, name);
    if (url === undefined) continue;
    let protocol: string;
    try {
      protocol = new URL(url).protocol;
    } catch {
      throw new UsageError(`${name}: not a URL (expected http://HOST:4318 or https://…)`);
    }
    if (protocol !== 'http:' && protocol !== 'https:')
      throw new UsageError(
        `${name}: loopfleet exports OTLP over HTTP; expected an http:// or https:// URL, not ${protocol}`,
      );
  }
  if ((value(env, 'OTEL_SDK_DISABLED') ?? '').toLowerCase() === 'true') return { traces: false, metrics: false };
  const common = value(env, 'OTEL_EXPORTER_OTLP_ENDPOINT') !== undefined;
  return {
    traces:
      (common || value(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') !== undefined) &&
      !exporterOff(env, 'OTEL_TRACES_EXPORTER'),
    metrics:
      (common || value(env, 'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT') !== undefined) &&
      !exporterOff(env, 'OTEL_METRICS_EXPORTER'),
  };
}

/** What the standard variables ask for that this exporter does not do, said once at start. */
export function otelWarnings(env: NodeJS.ProcessEnv): string[] {
  const warnings: string[] = [];
  for (const name of [
    'OTEL_EXPORTER_OTLP_PROTOCOL',
    'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL',
    'OTEL_EXPORTER_OTLP_METRICS_PROTOCOL',
  ]) {
    const protocol = value(env, name);
    if (protocol !== undefined && protocol !== 'http/json')
      warnings.push(`${name}=${protocol}: loopfleet exports OTLP as http/json`);
  }
  for (const name of ['OTEL_TRACES_EXPORTER', 'OTEL_METRICS_EXPORTER']) {
    const other = (value(env, name) ?? 'otlp')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== 'otlp' && s !== 'none');
    if (other.length > 0) warnings.push(`${name}: only otlp (or none) is supported; ignored ${other.join(', ')}`);
  }
  return warnings;
}

export interface OpenTelemetryOptions {
  /** where the SDK's own warnings and export failures go (a session points it at the fleet's log) */
  warn: (message: string) => void;
  /** `service.instance.id` (a worker's identity); the SDK's own default otherwise */
  instanceId?: string;
  /** how long a flush, and closing, may wait for the collector; default 10 s */
  flushTimeoutMs?: number;
}
