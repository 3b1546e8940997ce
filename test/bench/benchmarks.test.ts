import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { BENCHES } from '../../bench/list.js';
import { ROOT } from '../helpers/paths.js';

// Every registered benchmark, once, in quick mode: it must run to the end and report its figures. The
// figures themselves are not asserted (they belong to `npm run bench` on a quiet machine).
describe('the benchmarks, each once in quick mode', () => {
  it('lists every benchmark once', () => {
    expect(BENCHES.length).toBeGreaterThan(0);
    expect(new Set(BENCHES.map((b) => b.file)).size).toBe(BENCHES.length);
  });

  for (const bench of BENCHES) {
    it(`${bench.file} runs to the end`, { timeout: 120_000 }, async () => {
      const run = await execa(process.execPath, [join(ROOT, 'bench', 'run.ts'), '--quick', bench.file], {
        cwd: ROOT,
        reject: false,
        all: true,
      });
      expect(run.exitCode, run.all).toBe(0);
      expect(run.stdout).toContain(`(${bench.file}: `);
      expect(run.stdout).toMatch(/== Summary — quick mode/);
      expect(run.stdout).not.toMatch(/benchmark failed|ended without reporting/);
    });
  }
});
