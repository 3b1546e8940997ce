/**
 * `npm run bench`: every benchmark in a process of its own (timings and memory of one do not leak into
 * the next), each printing its own tables, then one summary. Benchmarks only print; nothing here fails
 * a build. Run after `npm run build`: they use the compiled engine in dist/.
 *
 *   node bench/run.ts                 all of them
 *   node bench/run.ts tui rss         only those whose file name starts with one of the words
 *   node bench/run.ts --quick [...]   each once with small sizes (BENCH_QUICK=1): does it run to the end?
 *                                     Exits 1 when one did not; its figures mean nothing.
 *
 * Node starts this file without the benchmarks' module resolution, so it imports that first (by its `.ts`
 * name, the one import in bench/ written so) and loads the rest once it is in place.
 */
import './hooks.ts';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { availableParallelism, cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SummaryRow } from './lib.js';

const lib = await import('./lib.js');
const { BENCHES } = await import('./list.js');

const args = process.argv.slice(2);
const quick = args.includes('--quick') || lib.quick;
const only = args.filter((a) => a !== '--quick');
if (!existsSync(lib.CLI)) {
  process.stderr.write('bench: dist/ is missing; run `npm run build` first (`npm run bench` does)\n');
  process.exit(2);
}

if (only.length > 0 && !BENCHES.some((b) => only.some((o) => b.file.startsWith(o)))) {
  process.stderr.write(`bench: no benchmark starts with ${only.join(', ')} (bench/list.ts names them)\n`);
  process.exit(2);
}

const gitVersion = await lib.git(process.cwd(), '--version').catch(() => 'git: not found');
lib.print(
  `loopfleet benchmarks — node ${process.version}, ${gitVersion}, ${availableParallelism()} cpus (${cpus()[0]?.model.trim() ?? '?'}), ` +
    `${(totalmem() / 1024 ** 3).toFixed(1)} GB; ${lib.load()}`,
);

const scratch = await mkdtemp(join(tmpdir(), 'loopfleet-bench-out-'));
/** each row with the 1-minute load average when its benchmark ended */
const summary: Array<SummaryRow & { load?: string }> = [];
/** benchmarks that did not run to the end (a non-zero exit, or no figures reported) */
let broken = 0;
const started = performance.now();
try {
  for (const [i, bench] of BENCHES.entries()) {
    if (only.length > 0 && !only.some((o) => bench.file.startsWith(o))) continue;
    const out = join(scratch, `${i}.json`);
    const t0 = performance.now();
    const code = await new Promise<number | null>((resolve) => {
      const child = spawn(process.execPath, lib.benchArgs(fileURLToPath(new URL(bench.file, import.meta.url))), {
        stdio: 'inherit',
        env: { ...process.env, BENCH_OUT: out, ...(quick ? { BENCH_QUICK: '1' } : {}) },
      });
      child.on('exit', (c) => resolve(c));
    });
    process.stdout.write(`   (${bench.file}: ${((performance.now() - t0) / 1000).toFixed(1)} s; ${lib.load()})\n`);
    if (code !== 0) {
      summary.push({ figure: bench.title, value: `benchmark failed (exit ${code})`, target: '', pass: false });
      broken++;
      continue;
    }
    const rows = existsSync(out) ? (JSON.parse(await readFile(out, 'utf8')) as SummaryRow[]) : [];
    if (rows.length === 0) {
      summary.push({
        figure: bench.title,
        value: 'benchmark ended without reporting its figures',
        target: '',
        pass: false,
      });
      broken++;
      continue;
    }
    const load1 = loadavg()[0]!.toFixed(1);
    summary.push(...rows.map((r) => ({ ...r, load: load1 })));
  }
} finally {
  await rm(scratch, { recursive: true, force: true });
}

lib.section(
  `Summary${quick ? ' — quick mode: each benchmark ran once, small; the figures are not measurements' : ''} (${((performance.now() - started) / 1000).toFixed(0)} s; at the end ${lib.load()})`,
);
lib.print(
  lib.table([
    ['figure', 'value', 'target', '', 'load'],
    ...summary.map((r) => [r.figure, r.value, r.target, lib.verdict(r.pass), r.load ?? '']),
  ]),
);
if (quick && broken > 0) process.exitCode = 1;
