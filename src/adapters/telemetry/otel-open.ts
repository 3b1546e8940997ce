/**
 * Opening telemetry: the environment's settings ({@link otelSignals}) decide, its values are checked
 * ({@link otelTuning}), and only then is the SDK loaded ({@link OtelTelemetry}), so a run without
 * OpenTelemetry never imports it.
 */
import { noopTelemetry, type Telemetry } from '../../ports/telemetry.js';
import { otelSignals, otelWarnings, type OpenTelemetryOptions } from './otel-config.js';
import { otelTuning } from './otel-tuning.js';

/**
 * The telemetry the environment asks for: the OpenTelemetry SDK over OTLP/HTTP when a signal is on, else the
 * no-op. The SDK reads its settings from this process's environment, so `env` must be `process.env` or a
 * copy of it (it decides only whether the SDK starts).
 */
export async function openTelemetry(env: NodeJS.ProcessEnv, options: OpenTelemetryOptions): Promise<Telemetry> {
  const signals = otelSignals(env);
  if (!signals.traces && !signals.metrics) return noopTelemetry;
  // Every value the SDK would act on is checked first: a UsageError here is exit 2 with nothing started.
  const { tuning, notices } = otelTuning(env);
  for (const warning of [...otelWarnings(env), ...notices]) options.warn(warning);
  const { OtelTelemetry } = await import('./otel-telemetry.js');
  return new OtelTelemetry(signals, options, tuning);
}
