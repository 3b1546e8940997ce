import { useEffect, useState } from 'react';
import type { FleetHandle } from '../core/fleet/handle.js';
import type { TaskState } from '../domain/types.js';
import { errorText } from './command-guards.js';
import type { DiffState } from './detail-content.js';

/** Changes whenever the task branch may have new commits: status, phase, attempt or the attempt's commit. */
function revision(task: TaskState): string {
  return [task.id, task.status, task.phase ?? '', task.attempt, task.attempts.at(-1)?.commit ?? ''].join('\u0000');
}

/**
 * The selected task's diff against base, fetched with `fleet.diff(id)` while `enabled` (the diff tab is
 * showing), and fetched again when the task's revision changes. A reply for an older request is ignored.
 * While a refetch for the same task runs, the previous diff stays on screen.
 */
export function useDiff(fleet: FleetHandle, task: TaskState | undefined, enabled: boolean): DiffState | null {
  const [state, setState] = useState<{ key: string; id: string; diff: DiffState } | null>(null);
  const key = task === undefined ? null : revision(task);
  const id = task?.id ?? null;

  useEffect(() => {
    if (!enabled || key === null || id === null) return;
    let current = true;
    setState((prev) => (prev !== null && prev.id === id ? { ...prev, key } : { key, id, diff: { status: 'loading' } }));
    fleet.diff(id).then(
      (text) => {
        if (current) setState({ key, id, diff: { status: 'ready', text } });
      },
      (error: unknown) => {
        if (current) setState({ key, id, diff: { status: 'error', message: errorText(error) } });
      },
    );
    return () => {
      current = false;
    };
  }, [fleet, id, key, enabled]);

  if (state === null || state.id !== id) return { status: 'loading' };
  return state.diff;
}
