/**
 * Every benchmark, in the order `npm run bench` runs them. One line registers one: `node bench/run.ts`
 * runs it, and test/bench/benchmarks.test.ts runs it once in quick mode (`--quick`, BENCH_QUICK=1) as part
 * of `npm test`, so a benchmark that no longer runs to the end fails the suite.
 */
export interface BenchEntry {
  /** a file in bench/ that prints its tables and reports its summary rows (lib.report) */
  file: string;
  title: string;
}

export const BENCHES: readonly BenchEntry[] = [
  { file: 'overhead.ts', title: '1. orchestrator overhead vs plain git' },
  { file: 'status.ts', title: '2. status --json' },
  { file: 'tui.ts', title: '3. TUI first frame and keypress latency' },
  { file: 'rss.ts', title: '4. RSS with 8 pipelines' },
  { file: 'cache.ts', title: '5. prompt caching' },
  { file: 'model-share.ts', title: '6. model vs orchestrator time per task' },
  { file: 'state-scale.ts', title: '7. state at scale (50 and 20,000 tasks)' },
  { file: 'workers.ts', title: '8. 40 tasks on 1 vs 4 workers over Redis' },
  { file: 'claim-check.ts', title: "9. the coordinator's check of workers' claims" },
  { file: 'stop.ts', title: '10. SIGTERM to exit at 2,000 tasks' },
  { file: 'session-open.ts', title: '11. session open and close' },
  { file: 'web.ts', title: '12. the web page at 2,000 tasks' },
  { file: 'split.ts', title: '13. a task split into parts against one task' },
  { file: 'tui-live.ts', title: '14. the interactive view in tmux while a real fleet works' },
];
