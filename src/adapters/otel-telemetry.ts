import {
  type Attributes as OtelAttributes,
  type Context,
  type Span as OtelSpan,
  type Tracer,
  type Meter,
  DiagLogLevel,
  ROOT_CONTEXT,
  SpanStatusCode,
  defaultTextMapGetter,
  defaultTextMapSetter,
  diag,
  isSpanContextValid,
  trace,
} from '@opentelemetry/api';
import { diagLogLevelFromString, getNumberFromEnv, getStringFromEnv, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, detectResources, hostDetector, resourceAttributesEnvDetector, resourceFromAttributes, serviceNameEnvDetector } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import type { Attributes, Counter, Histogram, InstrumentOptions, ObserveFn, Span, SpanOptions, Telemetry } from '../ports/telemetry.js';
import type { OpenTelemetryOptions, OtelSignals } from './otel-config.js';

const SCOPE = 'loopfleet';
/** a flush that the collector does not answer gives up after this long, so closing a run never hangs on it */
const FLUSH_TIMEOUT_MS = 10_000;

const propagator = new W3CTraceContextPropagator();

class OtelSpanHandle implements Span {
  readonly span: OtelSpan;
  #ended = false;

  constructor(span: OtelSpan) {
    this.span = span;
  }

  setAttributes(attributes: Attributes): void {
    this.span.setAttributes(attributes as OtelAttributes);
  }

  setStatus(status: 'ok' | 'error'): void {
    this.span.setStatus({ code: status === 'ok' ? SpanStatusCode.OK : SpanStatusCode.ERROR });
  }

  end(endTimeMs?: number): void {
    if (this.#ended) return;
    this.#ended = true;
    this.span.end(endTimeMs);
  }

  traceparent(): string | null {
    if (!isSpanContextValid(this.span.spanContext())) return null;
    const carrier: Record<string, string> = {};
    propagator.inject(trace.setSpan(ROOT_CONTEXT, this.span), carrier, defaultTextMapSetter);
    return carrier.traceparent ?? null;
  }
}

/** A parent from this process, or one from another through its W3C `traceparent` (an invalid one starts a new trace). */
function parentContext(parent: SpanOptions['parent']): Context {
  if (parent === undefined) return ROOT_CONTEXT;
  if (parent instanceof OtelSpanHandle) return trace.setSpan(ROOT_CONTEXT, parent.span);
  if ('traceparent' in parent) return propagator.extract(ROOT_CONTEXT, { traceparent: parent.traceparent }, defaultTextMapGetter);
  return ROOT_CONTEXT;
}

function positive(name: string, fallback: number): number {
  const n = getNumberFromEnv(name);
  return n !== undefined && n > 0 ? n : fallback;
}

/**
 * The OpenTelemetry SDK, OTLP/HTTP (JSON) exporters, batched. Not registered globally: the fleet's recorder
 * holds this instance, so nothing else in the process (a library's own instrumentation) exports through it.
 * The exporters read endpoints, headers, timeouts, compression and certificates from `OTEL_EXPORTER_OTLP_*`;
 * the resource is `service.name=loopfleet` with host facts, under `OTEL_RESOURCE_ATTRIBUTES` and
 * `OTEL_SERVICE_NAME`; batching honours `OTEL_BSP_*` and `OTEL_METRIC_EXPORT_INTERVAL` / `_TIMEOUT`.
 * The process detector is left out on purpose: it records the command line, which may carry a queue URL
 * with a password.
 */
export class OtelTelemetry implements Telemetry {
  readonly enabled = true;
  readonly #tracerProvider: TracerProvider | null;
  readonly #meterProvider: MeterProvider | null;
  readonly #tracer: Tracer;
  readonly #meter: Meter | null;
  #shutdown: Promise<void> | null = null;

  constructor(signals: OtelSignals, options: OpenTelemetryOptions) {
    const level = diagLogLevelFromString(getStringFromEnv('OTEL_LOG_LEVEL')) ?? DiagLogLevel.WARN;
    const log = (...args: unknown[]) => options.warn(`OpenTelemetry: ${args.map(String).join(' ')}`);
    diag.setLogger({ error: log, warn: log, info: log, debug: log, verbose: log }, { logLevel: level, suppressOverrideMessage: true });
    const own = resourceFromAttributes({
      'service.name': SCOPE,
      ...(options.instanceId === undefined ? {} : { 'service.instance.id': options.instanceId }),
    });
    // merge: the argument's attributes win, so the environment's settings override loopfleet's defaults
    const resource = defaultResource()
      .merge(detectResources({ detectors: [hostDetector] }))
      .merge(own)
      .merge(detectResources({ detectors: [resourceAttributesEnvDetector, serviceNameEnvDetector] }));
    this.#tracerProvider = signals.traces
      ? new TracerProvider({
          resource,
          spanProcessors: [
            new BatchSpanProcessor({
              exporter: new OTLPTraceExporter(),
              scheduledDelayMillis: positive('OTEL_BSP_SCHEDULE_DELAY', 5000),
              exportTimeoutMillis: positive('OTEL_BSP_EXPORT_TIMEOUT', 30_000),
              maxQueueSize: positive('OTEL_BSP_MAX_QUEUE_SIZE', 2048),
              maxExportBatchSize: positive('OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 512),
            }),
          ],
        })
      : null;
    this.#meterProvider = signals.metrics
      ? new MeterProvider({
          resource,
          readers: [
            new PeriodicExportingMetricReader({
              exporter: new OTLPMetricExporter(),
              exportIntervalMillis: positive('OTEL_METRIC_EXPORT_INTERVAL', 60_000),
              exportTimeoutMillis: positive('OTEL_METRIC_EXPORT_TIMEOUT', 30_000),
            }),
          ],
        })
      : null;
    this.#tracer = (this.#tracerProvider ?? trace.getTracerProvider()).getTracer(SCOPE);
    this.#meter = this.#meterProvider?.getMeter(SCOPE) ?? null;
  }

  startSpan(name: string, options: SpanOptions = {}): Span {
    const span = this.#tracer.startSpan(
      name,
      { ...(options.attributes === undefined ? {} : { attributes: options.attributes as OtelAttributes }), ...(options.startTimeMs === undefined ? {} : { startTime: options.startTimeMs }) },
      parentContext(options.parent),
    );
    return new OtelSpanHandle(span);
  }

  counter(name: string, options: InstrumentOptions): Counter {
    const counter = this.#meter?.createCounter(name, options);
    return { add: (value, attributes) => counter?.add(value, attributes as OtelAttributes) };
  }

  histogram(name: string, options: InstrumentOptions): Histogram {
    const histogram = this.#meter?.createHistogram(name, options);
    return { record: (value, attributes) => histogram?.record(value, attributes as OtelAttributes) };
  }

  observableGauge(name: string, options: InstrumentOptions, observe: ObserveFn): void {
    const gauge = this.#meter?.createObservableGauge(name, options);
    gauge?.addCallback(async (result) => {
      for (const o of await observe()) result.observe(o.value, o.attributes as OtelAttributes);
    });
  }

  async flush(): Promise<void> {
    // both signals are flushed even when one fails; the first failure is the answer
    const results = await Promise.allSettled([
      this.#tracerProvider?.forceFlush({ timeoutMillis: FLUSH_TIMEOUT_MS }),
      this.#meterProvider?.forceFlush({ timeoutMillis: FLUSH_TIMEOUT_MS }),
    ]);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
  }

  shutdown(): Promise<void> {
    this.#shutdown ??= (async () => {
      try {
        await this.flush();
      } finally {
        await Promise.allSettled([this.#tracerProvider?.shutdown(), this.#meterProvider?.shutdown({ timeoutMillis: FLUSH_TIMEOUT_MS })]);
        diag.disable();
      }
    })();
    return this.#shutdown;
  }
}
