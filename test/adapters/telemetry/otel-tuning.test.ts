import { describe, expect, it } from 'vitest';
import { otelTuning } from '../../../src/adapters/telemetry/otel-tuning.js';

describe('the OTEL_* values the SDK acts on, checked before it loads', () => {
  it('uses the SDK’s defaults when nothing is set', () => {
    expect(otelTuning({})).toEqual({
      tuning: {
        metricIntervalMs: 60_000,
        metricTimeoutMs: 30_000,
        spanDelayMs: 5000,
        spanTimeoutMs: 30_000,
        spanQueueSize: 2048,
        spanBatchSize: 512,
      },
      notices: [],
    });
  });

  it('lowers a default timeout to a shorter interval, and a batch to the queue, each with a notice', () => {
    const { tuning, notices } = otelTuning({
      OTEL_METRIC_EXPORT_INTERVAL: '1000',
      OTEL_BSP_MAX_QUEUE_SIZE: '10',
      OTEL_LOG_LEVEL: 'chatty',
    });
    expect(tuning).toMatchObject({
      metricIntervalMs: 1000,
      metricTimeoutMs: 1000,
      spanQueueSize: 10,
      spanBatchSize: 10,
    });
    expect(notices).toHaveLength(3);
    // an interval longer than the default timeout changes nothing else
    expect(otelTuning({ OTEL_METRIC_EXPORT_INTERVAL: '120000' }).notices).toEqual([]);
  });

  it('refuses, as bad input, what cannot be used — naming the variable, never a header’s value', () => {
    expect(() => otelTuning({ OTEL_METRIC_EXPORT_TIMEOUT: '-5' })).toThrow(/OTEL_METRIC_EXPORT_TIMEOUT=-5/);
    expect(() => otelTuning({ OTEL_BSP_SCHEDULE_DELAY: 'soon' })).toThrow(/OTEL_BSP_SCHEDULE_DELAY=soon/);
    expect(() => otelTuning({ OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '1.5' })).toThrow(/positive whole number/);
    expect(() => otelTuning({ OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: 'Infinity' })).toThrow(/TRACES_TIMEOUT/);
    expect(() => otelTuning({ OTEL_METRIC_EXPORT_INTERVAL: '2000', OTEL_METRIC_EXPORT_TIMEOUT: '3000' })).toThrow(
      /longer than OTEL_METRIC_EXPORT_INTERVAL=2000/,
    );
    expect(() => otelTuning({ OTEL_EXPORTER_OTLP_METRICS_HEADERS: 'x-key=s3cret,=nokey' })).toThrow(
      /^OTEL_EXPORTER_OTLP_METRICS_HEADERS: entry 2 is not key=value/,
    );
    expect(() => otelTuning({ OTEL_RESOURCE_ATTRIBUTES: 'team=core,deployment.environment' })).toThrow(
      /OTEL_RESOURCE_ATTRIBUTES: entry 2 is not key=value/,
    );
    expect(() => otelTuning({ OTEL_RESOURCE_ATTRIBUTES: 'team=%E0%A4%A' })).toThrow(/not valid percent-encoding/);
    expect(() => otelTuning({ OTEL_RESOURCE_ATTRIBUTES: `team=${'x'.repeat(256)}` })).toThrow(/longer than 255/);
    expect(otelTuning({ OTEL_RESOURCE_ATTRIBUTES: 'team=core,region=eu%2Cwest' }).notices).toEqual([]);
    expect(otelTuning({ OTEL_SDK_DISABLED: 'yes' }).notices).toEqual([
      'OTEL_SDK_DISABLED=yes is neither true nor false: telemetry stays on',
    ]);
    const refused = (() => {
      try {
        otelTuning({ OTEL_EXPORTER_OTLP_HEADERS: 's3cret-without-equals' });
        return null;
      } catch (error) {
        return (error as Error).message;
      }
    })();
    expect(refused).toMatch(/entry 1 is not key=value/);
    expect(refused).not.toContain('s3cret');
  });
});
