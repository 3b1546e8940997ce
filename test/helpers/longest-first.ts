/**
 * The order in which `npm test` hands out its files: the longest first, so that no worker is left alone with
 * a long file at the end while the others idle. Vitest's own order needs its result cache, which a fresh
 * clone lacks, and falls back to file size, which says little about a file that waits on a fleet.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that took longest on a 2-core machine, longest first. A stale entry costs only time, and the
 * architecture tests check that each one still exists.
 */
export const LONGEST_FILES: readonly string[] = [
  'test/integration/lock-concurrency.test.ts',
  'test/bench/benchmarks.test.ts',
  'test/integration/workers-faults.test.ts',
  'test/integration/workers.test.ts',
  'test/integration/workers-lock-faults.test.ts',
  'test/integration/workers-cli.test.ts',
  'test/integration/demo.test.ts',
  'test/security/forge-faults.test.ts',
  'test/core/land/pr/flow.test.ts',
  'test/integration/cli.test.ts',
  'test/integration/otel-settings-cli.test.ts',
  'test/integration/cli-watch.test.ts',
  'test/core/attempt/verified.test.ts',
  'test/commands/doctor-forge.test.ts',
  'test/integration/pr-github.test.ts',
  'test/core/executor/remote-fleet.test.ts',
  'test/security/secret-env-attacks.test.ts',
  'test/security/forge-attacks.test.ts',
  'test/integration/merge-queue.test.ts',
  'test/e2e/web-page.test.ts',
  'test/security/guard-attacks.test.ts',
  'test/integration/eval-configs.test.ts',
  'test/integration/record-replay.test.ts',
  'test/e2e/tui-tmux.test.ts',
  'test/integration/resume.test.ts',
  'test/security/sandbox-attacks.test.ts',
  'test/core/executor/remote-faults.test.ts',
  'test/security/worker-claim-attacks.test.ts',
  'test/core/fleet/fleet.test.ts',
  'test/integration/claude-code-agent.test.ts',
  'test/integration/discover-cli.test.ts',
  'test/core/discover/discover-forge-issues.test.ts',
  'test/security/check-integrity-attacks.test.ts',
  'test/security/untrusted-prompts-attacks.test.ts',
  'test/security/serve-attacks.test.ts',
  'test/integration/mcp.test.ts',
  'test/adapters/git/simple-git.test.ts',
];

/** After the named files: whole folders, the ones that run fleets and terminals first. */
const FOLDERS = ['test/e2e/', 'test/bench/', 'test/integration/', 'test/security/'];

function rank(file: string): number {
  const named = LONGEST_FILES.indexOf(file);
  if (named !== -1) return named;
  const folder = FOLDERS.findIndex((f) => file.startsWith(f));
  return LONGEST_FILES.length + (folder === -1 ? FOLDERS.length : folder);
}

/** {@link BaseSequencer} with the order above; within a folder, larger files first. */
export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const keyed = await Promise.all(
      files.map(async (spec) => {
        const file = path.relative(spec.project.config.root, spec.moduleId).split(path.sep).join('/');
        return { spec, rank: rank(file), size: (await stat(spec.moduleId)).size };
      }),
    );
    return keyed.sort((a, b) => a.rank - b.rank || b.size - a.size).map((k) => k.spec);
  }
}
