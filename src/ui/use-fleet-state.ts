import { useCallback, useLayoutEffect, useReducer } from 'react';
import type { FleetEvents } from '../core/task/events.js';
import type { FleetHandle } from '../core/fleet/handle.js';
import type { TaskState } from '../domain/types.js';
import { fleetReducer, initFleetState, type FleetAction, type FleetUiState, type Notice } from './fleet-reducer.js';
import { useThrottledQueue } from './use-throttled.js';

/** At most this many state updates per second reach React, however fast the engine emits. */
export const FLEET_UPDATES_PER_SECOND = 10;

/**
 * The fleet as the TUI sees it: the first snapshot from `fleet.tasks()` / `fleet.summary()`, then every
 * event folded in by `fleetReducer`. Events are queued and applied in order, in batches of at most
 * `FLEET_UPDATES_PER_SECOND` per second, so streaming agent text cannot flood the renderer.
 *
 * The second element re-reads `fleet.summary()` now (after pause/resume), queued behind the events
 * already received so an older event cannot overwrite it.
 */
export function useFleetState(fleet: FleetHandle, startNotice: Notice | null = null): [FleetUiState, () => void] {
  const [state, dispatch] = useReducer(fleetReducer, fleet, (f: FleetHandle) =>
    initFleetState(f, Date.now(), startNotice),
  );
  const queue = useThrottledQueue<FleetAction>(
    (actions) => dispatch(actions.length === 1 && actions[0] !== undefined ? actions[0] : { type: 'batch', actions }),
    1000 / FLEET_UPDATES_PER_SECOND,
  );

  // A layout effect subscribes in the same synchronous pass as the first commit, so no event emitted after
  // the initial snapshot can slip past before the listeners are attached.
  useLayoutEffect(() => {
    const events = fleet.events;
    const listeners: { [K in keyof FleetEvents]?: (...args: FleetEvents[K]) => void } = {
      task: (event) => queue.push({ type: 'task', event, at: Date.now() }),
      'agent-text': (event) => queue.push({ type: 'agent-text', event }),
      'tool-call': (event) => queue.push({ type: 'tool-call', event }),
      usage: (event) => queue.push({ type: 'usage', event, at: Date.now() }),
      'phase-output': (event) => queue.push({ type: 'phase-output', event }),
      gate: (event) => queue.push({ type: 'gate', event }),
      fleet: (summary) => queue.push({ type: 'fleet', summary, at: Date.now() }),
      log: (event) => queue.push({ type: 'log', event }),
      backlog: ({ added, removed }) => {
        // The event names ids only; snapshots come from the fleet, in the order the event lists them.
        // A removed task the fleet still reports (it was running: an edit never kills it) keeps its row.
        const current = new Map<string, TaskState>(fleet.tasks().map((t) => [t.id, t]));
        const snapshots = added.flatMap((id) => {
          const task = current.get(id);
          return task === undefined ? [] : [task];
        });
        const gone = removed.filter((id) => !current.has(id));
        queue.push({ type: 'backlog', added: snapshots, removed: gone, at: Date.now() });
      },
    };
    const entries = Object.entries(listeners) as [keyof FleetEvents, (...args: never[]) => void][];
    for (const [name, listener] of entries) events.on(name, listener as never);
    return () => {
      for (const [name, listener] of entries) events.off(name, listener as never);
    };
  }, [fleet, queue]);

  const refreshSummary = useCallback(() => {
    queue.push({ type: 'fleet', summary: fleet.summary(), at: Date.now() });
    queue.flush();
  }, [fleet, queue]);

  return [state, refreshSummary];
}
