import type {
  Attributes,
  Counter,
  Histogram,
  ObserveFn,
  Span,
  SpanOptions,
  Telemetry,
} from '../../src/ports/telemetry.js';

/** A span as the fake keeps it. Ids are sequence numbers; a traceparent parent is kept as the string. */
export interface FakeSpan {
  id: number;
  name: string;
  parent: number | string | null;
  attributes: Record<string, string | number | boolean>;
  status: 'unset' | 'ok' | 'error';
  startMs: number | null;
  endMs: number | null;
  ended: boolean;
  /** how many times end() was called */
  ends: number;
}

/** The Telemetry port in memory: spans, counter sums and histogram records by name and attributes, and the gauges to collect. */
export class FakeTelemetry implements Telemetry {
  readonly enabled = true;
  readonly spans: FakeSpan[] = [];
  readonly counters = new Map<string, Array<{ value: number; attributes: Attributes }>>();
  readonly histograms = new Map<string, Array<{ value: number; attributes: Attributes }>>();
  readonly gauges = new Map<string, ObserveFn>();
  flushes = 0;
  shutdowns = 0;
  readonly #handles = new Map<Span, FakeSpan>();

  startSpan(name: string, options: SpanOptions = {}): Span {
    const parent =
      options.parent === undefined
        ? null
        : 'traceparent' in options.parent && typeof options.parent.traceparent === 'string'
          ? options.parent.traceparent
          : (this.#handles.get(options.parent as Span)?.id ?? -1);
    const span: FakeSpan = {
      id: this.spans.length + 1,
      name,
      parent,
      attributes: { ...options.attributes },
      status: 'unset',
      startMs: options.startTimeMs ?? null,
      endMs: null,
      ended: false,
      ends: 0,
    };
    this.spans.push(span);
    const handle: Span = {
      setAttributes: (a) => Object.assign(span.attributes, a),
      setStatus: (s) => {
        span.status = s;
      },
      end: (at) => {
        span.ends++;
        if (span.ended) return;
        span.ended = true;
        span.endMs = at ?? null;
      },
      traceparent: () => `00-${'1'.repeat(32)}-${span.id.toString(16).padStart(16, '0')}-01`,
    };
    this.#handles.set(handle, span);
    return handle;
  }

  counter(name: string): Counter {
    const list = this.counters.get(name) ?? [];
    this.counters.set(name, list);
    return { add: (value, attributes = {}) => list.push({ value, attributes }) };
  }

  histogram(name: string): Histogram {
    const list = this.histograms.get(name) ?? [];
    this.histograms.set(name, list);
    return { record: (value, attributes = {}) => list.push({ value, attributes }) };
  }

  observableGauge(name: string, _options: unknown, observe: ObserveFn): void {
    this.gauges.set(name, observe);
  }

  async collect(name: string): Promise<ReadonlyArray<{ value: number; attributes?: Attributes }>> {
    const observe = this.gauges.get(name);
    if (observe === undefined) throw new Error(`no gauge ${name}`);
    return observe();
  }

  /** the sum of a counter's adds whose attributes include `match` */
  sum(name: string, match: Attributes = {}): number {
    return (this.counters.get(name) ?? [])
      .filter((a) => Object.entries(match).every(([k, v]) => a.attributes[k] === v))
      .reduce((n, a) => n + a.value, 0);
  }

  named(name: string): FakeSpan[] {
    return this.spans.filter((s) => s.name === name);
  }

  async flush(): Promise<void> {
    this.flushes++;
  }

  async shutdown(): Promise<void> {
    this.shutdowns++;
  }
}
