/**
 * 6. Model time vs orchestrator time per task: 4 tasks at concurrency 4 through the real engine, a
 * scripted model taking 300 ms per call (explorer, implementer, reviewer), `check: "true"`. Per task:
 * model time (its calls), orchestrator time (running → verified, minus the model time) and its share.
 */
import * as lib from './lib.js';
import * as fr from './fleet-run.js';

const TASKS = lib.quick ? 2 : 4;
const LATENCY_MS = lib.quick ? 20 : 300;

const repo = await lib.makeRepo({
  ...lib.sampleFiles(),
  'BACKLOG.md': lib.backlogText(`concurrency: ${TASKS}\ncheck: "true"\nreview: true`, TASKS),
});
try {
  const r = await fr.runFleetOnce({ root: repo.root, latencyMs: LATENCY_MS });
  const rows: string[][] = [
    ['task', 'model calls', 'model time', 'total (running → verified)', 'orchestrator', 'orchestrator share'],
  ];
  const shares: number[] = [];
  const orch: number[] = [];
  for (const id of Object.keys(r.statuses)) {
    const span = r.spans.get(id);
    if (span?.end == null) continue;
    const calls = r.model.calls.filter((c) => c.task === id);
    const model = calls.reduce((a, c) => a + c.ms, 0);
    const total = span.end - span.start;
    shares.push((total - model) / total);
    orch.push(total - model);
    rows.push([
      id,
      String(calls.length),
      lib.ms(model, 0),
      lib.ms(total, 0),
      lib.ms(total - model, 0),
      `${(((total - model) / total) * 100).toFixed(1)} %`,
    ]);
  }
  // Where the orchestrator's time goes, per task, from the timed adapters.
  const own = new Map<string, number>();
  for (const c of r.timings.calls) {
    if (c.task === null) continue;
    const key = `${c.service}.${c.op}`;
    own.set(key, (own.get(key) ?? 0) + c.ms / TASKS);
  }
  lib.section(
    `6. Model time vs orchestrator time per task — ${TASKS} tasks, concurrency ${TASKS}, model ${LATENCY_MS} ms per call, check "true", review on`,
  );
  lib.print(lib.table(rows));
  lib.print(
    `median orchestrator time ${lib.ms(lib.median(orch), 0)} per task = ${(lib.median(shares) * 100).toFixed(1)} % of the task's time; fleet open → close ${lib.ms(r.wallMs, 0)}`,
  );
  lib.print('');
  lib.print('Orchestrator calls, mean per task:');
  lib.print(
    lib.table([
      ['call', 'ms / task'],
      ...[...own.entries()].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, lib.ms(v, 1)]),
    ]),
  );
  await lib.report([
    {
      figure: `6 orchestrator share of a task (model ${LATENCY_MS} ms/call)`,
      value: `${lib.ms(lib.median(orch), 0)} of the task = ${(lib.median(shares) * 100).toFixed(1)} %`,
      target: '(none given)',
      pass: null,
    },
  ]);
} finally {
  await repo.cleanup();
}
