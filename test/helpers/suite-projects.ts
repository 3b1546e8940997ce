/**
 * How `npm test` groups its files into Vitest projects; see {@link PROCESS_WIDE}. The architecture tests
 * check these lists against the files.
 */

/** The folders of unit tests: many of their files run in turn in one process. */
export const UNIT_FOLDERS = [
  'adapters',
  'architecture',
  'commands',
  'core',
  'demo',
  'deploy',
  'docs',
  'domain',
  'ui',
  'web',
];

export const UNIT_GLOBS = UNIT_FOLDERS.flatMap((d) => [`test/${d}/**/*.test.ts`, `test/${d}/**/*.test.tsx`]);

/**
 * Unit files that change what every later file in the same process would see: `process.env`, chalk's colour
 * level, module mocks, fake timers, the working folder. Each keeps a process of its own.
 */
export const PROCESS_WIDE = [
  'test/adapters/git/remote.test.ts',
  'test/adapters/git/simple-git.test.ts',
  'test/adapters/model/cli-config-view.test.ts',
  'test/adapters/sandbox/execa-runner.test.ts',
  'test/adapters/store/fleet-lock.test.ts',
  'test/adapters/telemetry/otel-telemetry.test.ts',
  'test/core/fleet/workspace.test.ts',
  'test/core/telemetry/worker-spans.test.ts',
  'test/core/text/one-vocabulary.test.tsx',
  'test/ui/color.test.tsx',
  'test/ui/memo.test.tsx',
  'test/ui/recurring.test.tsx',
  'test/ui/units.test.ts',
];

/** What marks a file as {@link PROCESS_WIDE}, in its own text or in a helper it names. */
export const PROCESS_WIDE_MARK =
  /vi\.mock\(|vi\.stubEnv|vi\.stubGlobal|vi\.useFakeTimers|process\.chdir\(|process\.env\.[A-Z_]+ =|process\.env\[[^\]]+\] =|delete process\.env|forceColor|force-color|otel-env/;
