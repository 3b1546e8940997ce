import { useEffect } from 'react';
import { useStdout } from 'ink';
import type { FleetEvents } from '../core/task/events.js';
import type { FleetHandle } from '../core/fleet/handle.js';
import type { TaskStatus } from '../domain/types.js';

export const BELL = '\u0007';

/** Statuses a person wants to hear about: there is something to review or to fix. */
const RING_ON: ReadonlySet<TaskStatus> = new Set<TaskStatus>(['verified', 'failed', 'conflict']);
const QUIET_FLEET: ReadonlySet<string> = new Set(['idle', 'finished']);

/**
 * Rings the terminal bell when a task becomes verified, failed or conflict, and when the fleet goes idle
 * or finishes. Listens to the events directly (not the throttled state), so each transition rings once.
 */
export function useBell(fleet: FleetHandle, enabled: boolean): void {
  const { stdout } = useStdout();
  useEffect(() => {
    if (!enabled) return;
    let fleetState = fleet.summary().state;
    const ring = (): void => {
      stdout.write(BELL);
    };
    const onTask = ({ task, previousStatus }: FleetEvents['task'][0]): void => {
      if (task.status !== previousStatus && RING_ON.has(task.status)) ring();
    };
    const onFleet = ({ state }: FleetEvents['fleet'][0]): void => {
      const was = fleetState;
      fleetState = state;
      if (state !== was && QUIET_FLEET.has(state) && !QUIET_FLEET.has(was)) ring();
    };
    fleet.events.on('task', onTask);
    fleet.events.on('fleet', onFleet);
    return () => {
      fleet.events.off('task', onTask);
      fleet.events.off('fleet', onFleet);
    };
  }, [fleet, enabled, stdout]);
}
