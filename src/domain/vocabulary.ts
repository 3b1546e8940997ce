/** The engine's fixed lists: a task's statuses, an attempt's phases and the roles that play them. A leaf. */

export const TASK_STATUSES = [
  'queued',
  'running',
  'awaiting-approval',
  'verified',
  'merged',
  'discarded',
  'failed',
  'conflict',
] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

export const PHASES = ['setup', 'explore', 'implement', 'verify'] as const;
export type Phase = (typeof PHASES)[number];

export const ROLES = ['explorer', 'implementer', 'verifier'] as const;
export type Role = (typeof ROLES)[number];
