/**
 * 4. Memory with 8 pipelines in flight: 8 tasks at concurrency 8 through the real engine, a scripted model
 * that takes 2 s per call, `process.memoryUsage().rss` sampled every 100 ms. Run in a process of its own.
 */
import * as lib from './lib.js';
import * as fr from './fleet-run.js';

const TASKS = lib.quick ? 2 : 8;
const LATENCY_MS = lib.quick ? 50 : 2000;
const LIMIT_MB = 200;
const MB = 1024 * 1024;

const repo = await lib.makeRepo({
  ...lib.sampleFiles(),
  'BACKLOG.md': lib.backlogText(`concurrency: ${TASKS}\ncheck: "true"\nreview: false`, TASKS),
});
try {
  const baseline = process.memoryUsage();
  let peak = baseline.rss;
  let peakHeap = baseline.heapUsed;
  let samples = 0;
  const sample = () => {
    const m = process.memoryUsage();
    peak = Math.max(peak, m.rss);
    peakHeap = Math.max(peakHeap, m.heapUsed);
    samples++;
  };
  const timer = setInterval(sample, 100);
  const r = await fr.runFleetOnce({ root: repo.root, latencyMs: LATENCY_MS });
  sample();
  clearInterval(timer);
  const verified = Object.values(r.statuses).filter((s) => s === 'verified').length;
  const peakMb = peak / MB;

  lib.section(
    `4. RSS with ${TASKS} pipelines — ${TASKS} tasks at concurrency ${TASKS}, model ${LATENCY_MS} ms per call, rss sampled every 100 ms`,
  );
  lib.print(
    lib.table([
      ['', 'value'],
      ['rss before the session (engine loaded)', `${(baseline.rss / MB).toFixed(1)} MB`],
      ['rss peak', `${peakMb.toFixed(1)} MB`],
      ['heap used: before / peak', `${(baseline.heapUsed / MB).toFixed(1)} / ${(peakHeap / MB).toFixed(1)} MB`],
      ['model calls in flight at once (max)', String(r.model.maxInFlight)],
      ['tasks verified', `${verified}/${TASKS}`],
      ['run (open → close)', lib.ms(r.wallMs, 0)],
      ['samples', String(samples)],
    ]),
  );
  lib.print('');
  lib.print(
    lib.table([
      ['figure', 'value', 'target', ''],
      ['rss peak', `${peakMb.toFixed(1)} MB`, `≤ ${LIMIT_MB} MB`, lib.verdict(peakMb <= LIMIT_MB)],
    ]),
  );
  await lib.report([
    {
      figure: `4 RSS peak, ${TASKS} pipelines in flight (${r.model.maxInFlight} at once)`,
      value: `${peakMb.toFixed(1)} MB`,
      target: `≤ ${LIMIT_MB} MB`,
      pass: peakMb <= LIMIT_MB,
    },
  ]);
} finally {
  await repo.cleanup();
}
