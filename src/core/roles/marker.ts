import { ROLES, type Role } from '../../domain/types.js';

/**
 * Marker lines that tie a model request to its role, task and attempt. The pipeline writes them into every
 * prompt (the role marker into the system prompt, the others into the user turn); the scripted model reads
 * them back. Both sides use these functions, so the text is defined once.
 *
 * Invariant: each marker is a whole line `loopfleet-<key>: <value>`, and parsing accepts exactly what the
 * builders produce.
 */

export function roleMarker(role: Role): string {
  return `loopfleet-role: ${role}`;
}

export function taskMarker(id: string): string {
  return `loopfleet-task: ${id}`;
}

export function attemptMarker(n: number): string {
  return `loopfleet-attempt: ${n}`;
}

function markerValue(text: string, key: string): string | null {
  const match = new RegExp(`^loopfleet-${key}: *(\\S+) *$`, 'm').exec(text);
  return match?.[1] ?? null;
}

/** The role named by a role marker in `system`, or null when there is none (or it names no role). */
export function roleOf(system: string): Role | null {
  const value = markerValue(system, 'role');
  return value !== null && (ROLES as readonly string[]).includes(value) ? (value as Role) : null;
}

/** The task id named by a task marker in `prompt`, or null. */
export function taskOf(prompt: string): string | null {
  return markerValue(prompt, 'task');
}

/** The attempt number named by an attempt marker in `prompt`; 1 when there is none. */
export function attemptOf(prompt: string): number {
  const value = markerValue(prompt, 'attempt');
  const n = value === null ? NaN : Number(value);
  return Number.isInteger(n) && n >= 1 ? n : 1;
}
