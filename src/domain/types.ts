/**
 * Shared vocabulary of the engine. Plain data only: everything here must survive JSON round-trips. The
 * types live by topic in the modules re-exported below; imports go through this file.
 */

export const TASK_STATUSES = ['queued', 'running', 'awaiting-approval', 'verified', 'merged', 'discarded', 'failed', 'conflict'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

export const PHASES = ['setup', 'explore', 'implement', 'verify'] as const;
export type Phase = (typeof PHASES)[number];

export const ROLES = ['explorer', 'implementer', 'verifier'] as const;
export type Role = (typeof ROLES)[number];

export * from './usage.js';
export * from './config-types.js';
export * from './pr-types.js';
export * from './check-types.js';
export * from './task-spec.js';
export * from './task-state.js';
export * from './status-json.js';
export type { ForgeSetting } from './forge-setting.js';
