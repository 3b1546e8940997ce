/**
 * Traces and metrics, as the engine records them ({@link FleetTelemetry}) and an exporter sends them on
 * ({@link OtelTelemetry}: the OpenTelemetry SDK over OTLP/HTTP). With no exporter configured the
 * no-op below stands in: every call returns at once and nothing is kept.
 *
 * Invariant: what crosses this port is already allow-listed ({@link ATTRIBUTE_RULES}): ids, counts and
 * names of phases, outcomes, gates and models; never a prompt, agent text, code, a diff, check output, a
 * file path of a diff or a credential.
 */

export type AttributeValue = string | number | boolean;
export type Attributes = Readonly<Record<string, AttributeValue>>;

export interface Span {
  setAttributes(attributes: Attributes): void;
  /** 'error' marks a failed span; the reason goes in an allow-listed attribute, never in a free-text status */
  setStatus(status: 'ok' | 'error'): void;
  /** idempotent: a span ends once */
  end(endTimeMs?: number): void;
  /** W3C `traceparent` of this span, for a span started in another process; null when it is not recorded */
  traceparent(): string | null;
}

export interface SpanOptions {
  attributes?: Attributes;
  /** a span of this process, or a W3C `traceparent` from another (a worker's job); absent: a new trace */
  parent?: Span | { traceparent: string };
  /** ms since the epoch; default now */
  startTimeMs?: number;
}

export interface InstrumentOptions {
  description: string;
  /** UCUM, as OpenTelemetry's semantic conventions spell units: `{token}`, `USD`, `s`, `{task}` */
  unit: string;
}

export interface Counter {
  /** `value` ≥ 0 */
  add(value: number, attributes?: Attributes): void;
}

export interface Histogram {
  record(value: number, attributes?: Attributes): void;
}

export interface Observation {
  value: number;
  attributes?: Attributes;
}

/** Called at each collection; a rejection is reported by the exporter and that collection skips the gauge. */
export type ObserveFn = () => readonly Observation[] | Promise<readonly Observation[]>;

export interface Telemetry {
  /** false for the no-op: callers may skip work that only feeds telemetry */
  readonly enabled: boolean;
  startSpan(name: string, options?: SpanOptions): Span;
  counter(name: string, options: InstrumentOptions): Counter;
  histogram(name: string, options: InstrumentOptions): Histogram;
  observableGauge(name: string, options: InstrumentOptions, observe: ObserveFn): void;
  /** sends everything recorded so far (spans ended, a metrics collection); resolves when the exporter answered */
  flush(): Promise<void>;
  /** flush, then stop: later calls record nothing */
  shutdown(): Promise<void>;
}

const noopSpan: Span = {
  setAttributes: () => undefined,
  setStatus: () => undefined,
  end: () => undefined,
  traceparent: () => null,
};

export const noopTelemetry: Telemetry = {
  enabled: false,
  startSpan: () => noopSpan,
  counter: () => ({ add: () => undefined }),
  histogram: () => ({ record: () => undefined }),
  observableGauge: () => undefined,
  flush: () => Promise.resolve(),
  shutdown: () => Promise.resolve(),
};
