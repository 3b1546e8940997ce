/**
 * Shared vocabulary of the engine. Plain data only: everything here must survive JSON round-trips. The
 * types live by topic in the modules re-exported below; imports go through this file.
 */

export * from './vocabulary.js';
export * from './usage.js';
export * from './config-types.js';
export * from './pr-types.js';
export * from './check-types.js';
export * from './task-spec.js';
export * from './task-state.js';
export * from './status-json.js';
export * from './cost-per-task.js';
export type { ForgeSetting } from './forge-setting.js';
