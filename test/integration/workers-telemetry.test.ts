import { afterEach, describe, expect, it } from 'vitest';
import { OtlpReceiver } from '../helpers/otlp-receiver.js';
import { pass, startFleet, type Fleet } from '../helpers/workers-fleet.js';

let fleet: Fleet | null = null;
let receiver: OtlpReceiver | null = null;
afterEach(async () => {
  await fleet?.close();
  fleet = null;
  await receiver?.close();
  receiver = null;
});

/** Whatever the outer environment says of OpenTelemetry: each process here gets only the receiver. */
function otelFree(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).map(([k, v]) => [k, k.startsWith('OTEL_') ? undefined : v]));
}

describe('a coordinator and a worker join one trace', () => {
  it("the worker's phase spans carry the coordinator's trace id and have its attempt span as parent; the coordinator records no phase", {
    timeout: 120_000,
  }, async () => {
    receiver = await OtlpReceiver.start();
    const ids = ['T-1'];
    fleet = await startFleet({
      ids,
      script: pass(ids),
      front: 'check: test -n "$(ls T-*.txt)"',
      env: { ...otelFree(), OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
    });
    const workers = [await fleet.worker('w1'), await fleet.worker('w2')];
    const done = await fleet.coordinator().child;
    expect(done.exitCode).toBe(0);
    expect(done.all).toMatch(/done: 1 verified/);
    // A worker exports what is left when it stops (after its drain).
    for (const w of workers) w.child.kill('SIGTERM');
    for (const w of workers) expect((await w.child).exitCode).toBe(0);
    const worker = workers.find((w) => /job T-1:1: started/.test(w.output()))!;
    const workerId = /worker (\S+) on/.exec(worker.output())![1]!;

    const spans = receiver.spans();
    const attempt = spans.find((s) => s.name === 'attempt 1' && s.attributes['loopfleet.task.id'] === 'T-1');
    expect(attempt, `spans: ${spans.map((s) => s.name).join(', ')}`).toBeDefined();
    expect(attempt!.resource['service.instance.id']).not.toBe(workerId);
    const phases = spans.filter((s) => s.name.startsWith('phase '));
    expect(phases.map((s) => s.name)).toEqual(
      expect.arrayContaining(['phase setup', 'phase explore', 'phase implement', 'phase verify']),
    );
    for (const phase of phases) {
      expect(phase.resource['service.instance.id']).toBe(workerId);
      expect(phase.attributes['loopfleet.worker.id']).toBe(workerId);
      expect(phase.traceId).toBe(attempt!.traceId);
      expect(phase.parentSpanId).toBe(attempt!.spanId);
    }
    // Each phase once: the coordinator left them to the worker.
    expect(new Set(phases.map((s) => s.name)).size).toBe(phases.length);
    expect(attempt!.attributes['loopfleet.worker.id']).toBe(workerId);
    // The coordinator's gauges come from the queue: both workers live, no job waiting at the end.
    expect([...receiver.latest('loopfleet.workers').values()].map((p) => p.value)).toEqual([2]);
    expect([...receiver.latest('loopfleet.queue.depth').values()].map((p) => p.value)).toEqual([0]);
  });
});
