import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { LongestFirst } from './test/helpers/longest-first.js';
import { PROCESS_WIDE, UNIT_GLOBS } from './test/helpers/suite-projects.js';

export default defineConfig({
  test: {
    // The built CLI, started hundreds of times by the suite, keeps V8's compiled code between starts (as
    // the installed `loopfleet` does in the user's cache folder).
    env: { NODE_COMPILE_CACHE: fileURLToPath(new URL('./node_modules/.cache/compile-cache', import.meta.url)) },
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Most tests wait on git, subprocesses, sockets and a terminal rather than on the CPU: two files more than
    // there are cores keep the cores busy while files wait (on 2 cores: 254 s against 288 s with one more).
    maxWorkers: availableParallelism() + 2,
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
