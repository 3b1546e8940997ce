import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { LongestFirst } from './test/helpers/longest-first.js';
import { PROCESS_WIDE, UNIT_GLOBS } from './test/helpers/suite-projects.js';

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Most tests wait on git, subprocesses, sockets and a terminal rather than on the CPU: one file more than
    // there are cores keeps the cores busy while a file waits.
    maxWorkers: availableParallelism() + 1,
    sequence: { sequencer: LongestFirst },
    projects: [
      {
        extends: true,
        test: {
          name: 'isolated',
          include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
          exclude: UNIT_GLOBS,
        },
      },
      {
        extends: true,
        test: { name: 'process-wide', include: PROCESS_WIDE },
      },
      {
        extends: true,
        test: {
          name: 'shared',
          include: UNIT_GLOBS,
          exclude: PROCESS_WIDE,
          // One process runs many of these files in turn: none of them changes what the next one sees.
          isolate: false,
        },
      },
    ],
  },
});
