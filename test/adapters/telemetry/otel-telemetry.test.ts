import { describe, expect, it } from 'vitest';
import { otelSignals, otelWarnings } from '../../../src/adapters/telemetry/otel-config.js';
import { openTelemetry } from '../../../src/adapters/telemetry/otel-open.js';
import { UsageError } from '../../../src/domain/errors.js';
import { noopTelemetry } from '../../../src/ports/telemetry.js';
import { otelTestEnv } from '../../helpers/otel-env.js';

const { receiver, collector } = otelTestEnv();

describe('which signals the environment turns on', () => {
  it('is off with no endpoint, per signal with a signal endpoint, and off again when disabled', () => {
    expect(otelSignals({})).toEqual({ traces: false, metrics: false });
    expect(otelSignals({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toEqual({
      traces: true,
      metrics: true,
    });
    expect(otelSignals({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' })).toEqual({
      traces: true,
      metrics: false,
    });
    expect(otelSignals({ OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'https://c/v1/metrics' })).toEqual({
      traces: false,
      metrics: true,
    });
    expect(otelSignals({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_METRICS_EXPORTER: 'none' })).toEqual({
      traces: true,
      metrics: false,
    });
    expect(otelSignals({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' })).toEqual({
      traces: false,
      metrics: false,
    });
    expect(otelSignals({ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' })).toEqual({ traces: false, metrics: false });
  });

  it('refuses an endpoint that is not an http(s) URL, naming the variable', () => {
    expect(() => otelSignals({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318 ' })).toThrow(UsageError);
    expect(() => otelSignals({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'not a url' })).toThrow(
      /OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: not a URL/,
    );
    expect(() => otelSignals({ OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://c:4317' })).toThrow(
      /OTEL_EXPORTER_OTLP_ENDPOINT: .*http/,
    );
  });

  it('says what it does not do: another protocol or exporter', () => {
    expect(otelWarnings({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_TRACES_EXPORTER: 'otlp,zipkin' })).toEqual([
      'OTEL_EXPORTER_OTLP_PROTOCOL=grpc: loopfleet exports OTLP as http/json',
      'OTEL_TRACES_EXPORTER: only otlp (or none) is supported; ignored zipkin',
    ]);
    expect(otelWarnings({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).toEqual([]);
  });

  it('is the no-op when off', async () => {
    expect(await openTelemetry({}, { warn: () => undefined })).toBe(noopTelemetry);
  });
});

describe('the OpenTelemetry adapter against an OTLP/HTTP receiver', () => {
  it("exports spans with their parents, counters, histograms and gauges, under the environment's resource and headers", async () => {
    const r = await receiver();
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = r.url;
    process.env.OTEL_EXPORTER_OTLP_HEADERS = 'x-team=night-shift';
    process.env.OTEL_RESOURCE_ATTRIBUTES = 'deployment.environment.name=test';
    const warnings: string[] = [];
    const t = await openTelemetry(process.env, { warn: (w) => warnings.push(w), instanceId: 'worker-1' });
    expect(t.enabled).toBe(true);

    const root = t.startSpan('task T-1', { attributes: { 'loopfleet.task.id': 'T-1' } });
    const child = t.startSpan('attempt 1', { parent: root, attributes: { 'loopfleet.attempt': 1 } });
    child.setStatus('error');
    child.end();
    child.end();
    const remote = t.startSpan('phase explore', { parent: { traceparent: root.traceparent()! } });
    remote.end();
    root.end();
    t.counter('loopfleet.tokens', { description: 'tokens', unit: '{token}' }).add(120, {
      'loopfleet.token.kind': 'input',
    });
    t.histogram('loopfleet.attempt.duration', { description: 'd', unit: 's' }).record(2.5);
    let observed = 0;
    t.observableGauge('loopfleet.workers', { description: 'w', unit: '{worker}' }, async () => {
      observed++;
      return [{ value: 3 }];
    });
    await t.shutdown();

    const spans = r.spans();
    expect(spans.map((s) => s.name).sort()).toEqual(['attempt 1', 'phase explore', 'task T-1']);
    const byName = Object.fromEntries(spans.map((s) => [s.name, s]));
    expect(byName['task T-1']!.parentSpanId).toBeNull();
    expect(byName['attempt 1']!.parentSpanId).toBe(byName['task T-1']!.spanId);
    expect(byName['phase explore']!.parentSpanId).toBe(byName['task T-1']!.spanId);
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
    expect(byName['attempt 1']!.status).toBe(2);
    expect(byName['attempt 1']!.attributes).toEqual({ 'loopfleet.attempt': 1 });
    expect(byName['task T-1']!.resource).toMatchObject({
      'service.name': 'loopfleet',
      'service.instance.id': 'worker-1',
      'deployment.environment.name': 'test',
    });
    expect(r.requests.every((q) => q.headers['x-team'] === 'night-shift')).toBe(true);

    expect([...r.latest('loopfleet.tokens').values()].map((p) => [p.value, p.attributes, p.unit])).toEqual([
      [120, { 'loopfleet.token.kind': 'input' }, '{token}'],
    ]);
    const histogram = [...r.latest('loopfleet.attempt.duration').values()];
    expect(histogram.map((p) => [p.count, p.value])).toEqual([[1, 2.5]]);
    expect(observed).toBeGreaterThan(0);
    expect([...r.latest('loopfleet.workers').values()].map((p) => p.value)).toEqual([3]);
    expect(r.refused).toEqual([]);
    expect(warnings).toEqual([]);
  });

  it("honours OTEL_SERVICE_NAME over loopfleet's own name, and gzip compression", async () => {
    const r = await receiver();
    process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = `${r.url}/v1/traces`;
    process.env.OTEL_SERVICE_NAME = 'night-fleet';
    process.env.OTEL_EXPORTER_OTLP_COMPRESSION = 'gzip';
    const t = await openTelemetry(process.env, { warn: () => undefined });
    t.startSpan('task T-9').end();
    t.counter('loopfleet.cost', { description: 'c', unit: 'USD' }).add(1);
    await t.shutdown();
    expect(r.spans().map((s) => [s.name, s.resource['service.name']])).toEqual([['task T-9', 'night-fleet']]);
    expect(r.requests.map((q) => [q.path, q.headers['content-encoding']])).toEqual([['/v1/traces', 'gzip']]);
  });

  it("one signal only: metrics without traces send no span, and a span there is the no-op's", async () => {
    const r = await receiver();
    process.env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT = `${r.url}/v1/metrics`;
    const t = await openTelemetry(process.env, { warn: () => undefined });
    const span = t.startSpan('task T-2');
    span.end();
    expect(span.traceparent()).toBeNull();
    t.counter('loopfleet.tokens', { description: 't', unit: '{token}' }).add(5);
    await t.shutdown();
    // the flush and the shutdown each collect once
    expect(new Set(r.requests.map((q) => q.path))).toEqual(new Set(['/v1/metrics']));
    expect([...r.latest('loopfleet.tokens').values()].map((p) => p.value)).toEqual([5]);
  });

  it('a collector that refuses the export: the flush rejects, so the caller can say so', async () => {
    const url = await collector((_req, res) =>
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"message":"bad"}'),
    );
    process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = `${url}/v1/traces`;
    const t = await openTelemetry(process.env, { warn: () => undefined });
    t.startSpan('task T-1').end();
    await expect(t.flush()).rejects.toThrow();
    await t.shutdown().catch(() => undefined);
  });

  it('a collector that never answers: closing gives up within the flush timeout and says what failed', async () => {
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = await collector(() => undefined);
    const t = await openTelemetry(process.env, { warn: () => undefined, flushTimeoutMs: 500 });
    t.startSpan('task T-1').end();
    t.counter('loopfleet.cost', { description: 'c', unit: 'USD' }).add(1);
    const started = performance.now();
    await expect(t.shutdown()).rejects.toThrow(/^OTLP export failed: .*(timeout|did not answer)/);
    // the flush's 500 ms and the shutdown's rest of it, with room for a loaded machine; the exporter's own timeout is 10 s
    expect(performance.now() - started).toBeLessThan(5000);
  });

  it('a traceparent that is not W3C starts a new trace instead of joining a made-up one', async () => {
    const r = await receiver();
    process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = `${r.url}/v1/traces`;
    const t = await openTelemetry(process.env, { warn: () => undefined });
    t.startSpan('phase verify', { parent: { traceparent: 'garbage' } }).end();
    await t.shutdown();
    expect(r.spans().map((s) => s.parentSpanId)).toEqual([null]);
  });
});
