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
import { diagLogLevelFromString, getStringFromEnv, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import {
  defaultResource,
  detectResources,
  hostDetector,
  resourceAttributesEnvDetector,
  resourceFromAttributes,
  serviceNameEnvDetector,
} from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import {
  noopTelemetry,
  type Attributes,
  type Counter,
  type Histogram,
  type InstrumentOptions,
  type ObserveFn,
  type Span,
  type SpanOptions,
  type Telemetry,
} from '../../ports/telemetry.js';
import type { OpenTelemetryOptions, OtelSignals } from './otel-config.js';
import type { OtelTuning } from './otel-tuning.js';
import { formatLimitDuration } from '../../core/text/format-units.js';

const SCOPE = 'loopfleet';
/** a flush (and the shutdown after it) that the collector does not answer gives up after this long by default */
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
  if ('traceparent' in parent)
    return propagator.extract(ROOT_CONTEXT, { traceparent: parent.traceparent }, defaultTextMapGetter);
  return ROOT_CONTEXT;
}

/** `work` or a rejection after `ms`; the timer does not keep the process alive (an export still in flight is left to its own timeout). */
function within(work: Promise<void> | undefined, ms: number, what: string): Promise<void> {
  if (work === undefined) return Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what}: the collector did not answer within ${formatLimitDuration(ms)}`)),
      ms,
    );
    timer.unref();
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** The SDK rejects a flush with an Error, an array of them, or a bare value: one Error that says what failed. */
function exportError(reason: unknown): Error {
  const parts = (Array.isArray(reason) ? reason : [reason]).map((r) => (r instanceof Error ? r.message : String(r)));
  return new Error(`OTLP export failed: ${parts.join('; ')}`);
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
  /** null with traces off: spans are the no-op's, never a global provider's */
  readonly #tracer: Tracer | null;
  readonly #meter: Meter | null;
  readonly #flushTimeoutMs: number;
  #shutdown: Promise<void> | null = null;

  /** `tuning`: the batching and export values, checked by {@link otelTuning} so no SDK constructor throws */
  constructor(signals: OtelSignals, options: OpenTelemetryOptions, tuning: OtelTuning) {
    this.#flushTimeoutMs = options.flushTimeoutMs ?? FLUSH_TIMEOUT_MS;
    const level = diagLogLevelFromString(getStringFromEnv('OTEL_LOG_LEVEL')) ?? DiagLogLevel.WARN;
    const log = (...args: unknown[]) => options.warn(`OpenTelemetry: ${args.map(String).join(' ')}`);
    diag.setLogger(
      { error: log, warn: log, info: log, debug: log, verbose: log },
      { logLevel: level, suppressOverrideMessage: true },
    );
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
              scheduledDelayMillis: tuning.spanDelayMs,
              exportTimeoutMillis: tuning.spanTimeoutMs,
              maxQueueSize: tuning.spanQueueSize,
              maxExportBatchSize: tuning.spanBatchSize,
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
              exportIntervalMillis: tuning.metricIntervalMs,
              exportTimeoutMillis: tuning.metricTimeoutMs,
            }),
          ],
        })
      : null;
    this.#tracer = this.#tracerProvider?.getTracer(SCOPE) ?? null;
    this.#meter = this.#meterProvider?.getMeter(SCOPE) ?? null;
  }

  startSpan(name: string, options: SpanOptions = {}): Span {
    if (this.#tracer === null) return noopTelemetry.startSpan(name, options);
    const span = this.#tracer.startSpan(
      name,
      {
        ...(options.attributes === undefined ? {} : { attributes: options.attributes as OtelAttributes }),
        ...(options.startTimeMs === undefined ? {} : { startTime: options.startTimeMs }),
      },
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

  flush(): Promise<void> {
    return this.#flush(this.#flushTimeoutMs);
  }

  /** Both signals, each within `timeoutMs` (the SDK's own timeouts do not bound a request in flight); the first failure, as one Error, is the answer. */
  async #flush(timeoutMs: number): Promise<void> {
    const results = await Promise.allSettled([
      within(this.#tracerProvider?.forceFlush({ timeoutMillis: timeoutMs }), timeoutMs, 'traces'),
      within(this.#meterProvider?.forceFlush({ timeoutMillis: timeoutMs }), timeoutMs, 'metrics'),
    ]);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed !== undefined) throw exportError(failed.reason);
  }

  /** Flushes, then stops both providers: all of it within the flush timeout, a collector that hangs included. */
  shutdown(): Promise<void> {
    this.#shutdown ??= (async () => {
      const deadline = Date.now() + this.#flushTimeoutMs;
      try {
        await this.#flush(this.#flushTimeoutMs);
      } finally {
        // what the flush could not send is not tried again past the deadline: the metric reader's last
        // collection gets what time is left (spans are already out of the processor's buffer)
        const left = Math.max(1, deadline - Date.now());
        await Promise.allSettled([
          within(this.#tracerProvider?.shutdown(), left, 'traces'),
          within(this.#meterProvider?.shutdown({ timeoutMillis: left }), left, 'metrics'),
        ]);
        diag.disable();
      }
    })();
    return this.#shutdown;
  }
}
