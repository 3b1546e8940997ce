/**
 * Where the repository's own files are, for tests that run the built CLI (`npm run build` first) or read
 * what the package ships. One place, so a test file can move between folders without a path going stale.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** the repository's top-level folder */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** the built engine, as `npm run build` leaves it */
export const DIST = join(ROOT, 'dist');
/** the built CLI, run with `process.execPath` */
export const CLI = join(DIST, 'cli.js');
/** the built `loopfleet` executable (the Node version check in front of the CLI) */
export const BIN = join(DIST, 'bin.js');
export const SRC = join(ROOT, 'src');
/** the packaged role definitions */
export const PACKAGED_AGENTS = join(ROOT, 'agents');
/** the packaged backlogs: the init template and the demo repository */
export const PACKAGED_BACKLOG = join(ROOT, 'backlog');
/** test/fixtures */
export const FIXTURES = join(ROOT, 'test', 'fixtures');
