import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Most tests wait on git, subprocesses, sockets and a terminal rather than on the CPU: two files at a
    // time even on a 2-core machine, where the default (cores - 1) would run them one by one.
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
