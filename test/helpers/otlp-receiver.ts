import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

/**
 * An OTLP/HTTP receiver on loopback, as a collector would be: `POST /v1/traces` and `/v1/metrics` with
 * `Content-Type: application/json` (what @opentelemetry/exporter-*-otlp-http 0.301 sends; gzip when
 * `OTEL_EXPORTER_OTLP_COMPRESSION=gzip`). A request of any other type is answered 415 and kept in `refused`
 * so a test sees it. Ids are hex strings in OTLP/JSON; int64 values may arrive as strings.
 */

type AnyValue = { stringValue?: string; intValue?: number | string; doubleValue?: number; boolValue?: boolean };
interface KeyValue {
  key: string;
  value: AnyValue;
}

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  name: string;
  attributes: Record<string, string | number | boolean>;
  /** 0 unset, 1 ok, 2 error */
  status: number;
  startNs: bigint;
  endNs: bigint;
  resource: Record<string, string | number | boolean>;
}

export interface ReceivedPoint {
  metric: string;
  unit: string;
  kind: 'sum' | 'gauge' | 'histogram';
  /** 1 delta, 2 cumulative (sums and histograms) */
  temporality: number | null;
  attributes: Record<string, string | number | boolean>;
  /** a sum's or gauge's value; a histogram's sum */
  value: number;
  /** a histogram's count */
  count: number | null;
  timeNs: bigint;
}

export interface ReceivedRequest {
  path: string;
  headers: IncomingMessage['headers'];
  /** the decoded body, as text: what a test scans for strings that must never be exported */
  text: string;
}

function scalar(v: AnyValue): string | number | boolean {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  throw new Error(`unexpected OTLP value ${JSON.stringify(v)}`);
}

function attrs(list: KeyValue[] | undefined): Record<string, string | number | boolean> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, scalar(kv.value)]));
}

function bodyOf(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

export class OtlpReceiver {
  readonly requests: ReceivedRequest[] = [];
  readonly refused: Array<{ path: string; contentType: string | undefined }> = [];
  readonly #server: Server;

  private constructor(server: Server) {
    this.#server = server;
  }

  static async start(): Promise<OtlpReceiver> {
    const server = createServer();
    const receiver = new OtlpReceiver(server);
    server.on('request', (req, res) => {
      bodyOf(req).then(
        (raw) => {
          const path = req.url ?? '';
          const type = req.headers['content-type'];
          if (
            req.method !== 'POST' ||
            (path !== '/v1/traces' && path !== '/v1/metrics') ||
            type !== 'application/json'
          ) {
            receiver.refused.push({ path, contentType: type });
            res.writeHead(415).end();
            return;
          }
          const body = req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
          receiver.requests.push({ path, headers: req.headers, text: body.toString('utf8') });
          res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        },
        () => res.writeHead(400).end(),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  /** the base URL, as `OTEL_EXPORTER_OTLP_ENDPOINT` takes it */
  get url(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  /** everything received, decoded, as one text */
  allText(): string {
    return this.requests.map((r) => r.text).join('\n');
  }

  spans(): ReceivedSpan[] {
    const out: ReceivedSpan[] = [];
    for (const r of this.requests.filter((q) => q.path === '/v1/traces')) {
      const body = JSON.parse(r.text) as {
        resourceSpans: Array<{
          resource?: { attributes?: KeyValue[] };
          scopeSpans: Array<{ spans: Array<Record<string, unknown>> }>;
        }>;
      };
      for (const rs of body.resourceSpans) {
        const resource = attrs(rs.resource?.attributes);
        for (const ss of rs.scopeSpans) {
          for (const s of ss.spans) {
            out.push({
              traceId: s.traceId as string,
              spanId: s.spanId as string,
              parentSpanId: typeof s.parentSpanId === 'string' && s.parentSpanId !== '' ? s.parentSpanId : null,
              name: s.name as string,
              attributes: attrs(s.attributes as KeyValue[] | undefined),
              status: ((s.status as { code?: number } | undefined)?.code ?? 0) as number,
              startNs: BigInt(s.startTimeUnixNano as string),
              endNs: BigInt(s.endTimeUnixNano as string),
              resource,
            });
          }
        }
      }
    }
    return out;
  }

  points(): ReceivedPoint[] {
    const out: ReceivedPoint[] = [];
    for (const r of this.requests.filter((q) => q.path === '/v1/metrics')) {
      const body = JSON.parse(r.text) as {
        resourceMetrics: Array<{ scopeMetrics: Array<{ metrics: Array<Record<string, unknown>> }> }>;
      };
      for (const rm of body.resourceMetrics) {
        for (const sm of rm.scopeMetrics) {
          for (const m of sm.metrics) {
            const base = { metric: m.name as string, unit: (m.unit as string | undefined) ?? '' };
            type Point = {
              attributes?: KeyValue[];
              asInt?: number | string;
              asDouble?: number;
              sum?: number;
              count?: number | string;
              timeUnixNano: string;
            };
            const kinds: Array<
              ['sum' | 'gauge' | 'histogram', { dataPoints: Point[]; aggregationTemporality?: number } | undefined]
            > = [
              ['sum', m.sum as never],
              ['gauge', m.gauge as never],
              ['histogram', m.histogram as never],
            ];
            for (const [kind, data] of kinds) {
              for (const p of data?.dataPoints ?? []) {
                out.push({
                  ...base,
                  kind,
                  temporality: data?.aggregationTemporality ?? null,
                  attributes: attrs(p.attributes),
                  value: kind === 'histogram' ? (p.sum ?? 0) : Number(p.asInt ?? p.asDouble ?? 0),
                  count: kind === 'histogram' ? Number(p.count ?? 0) : null,
                  timeNs: BigInt(p.timeUnixNano),
                });
              }
            }
          }
        }
      }
    }
    return out;
  }

  /**
   * The latest value of each series of `metric` (cumulative sums and gauges: the last collection holds the
   * total), keyed by its attributes in a stable order.
   */
  latest(metric: string): Map<string, ReceivedPoint> {
    const series = new Map<string, ReceivedPoint>();
    for (const p of this.points().filter((q) => q.metric === metric)) {
      if (p.temporality === 1) throw new Error(`${metric}: delta temporality; sum the points instead`);
      const key = JSON.stringify(Object.entries(p.attributes).sort(([a], [b]) => a.localeCompare(b)));
      const seen = series.get(key);
      if (seen === undefined || seen.timeNs <= p.timeNs) series.set(key, p);
    }
    return series;
  }

  close(): Promise<void> {
    return new Promise((resolve, reject) => this.#server.close((e) => (e ? reject(e) : resolve())));
  }
}
