import type { ReviewWait } from '../../core/fleet/handle.js';
import type { FleetEmitter, FleetEvents } from '../../core/task/events.js';
import { jsonText } from '../../domain/sanitize.js';
import { clean } from './clean.js';
import { taskRow } from './task-json.js';

/** The names of the events `GET /api/events` sends: the fleet's own event names. */
export const EVENT_NAMES = [
  'task',
  'agent-text',
  'tool-call',
  'usage',
  'phase-output',
  'gate',
  'backlog',
  'fleet',
  'log',
] as const satisfies ReadonlyArray<keyof FleetEvents>;

/** One subscriber of the stream: it is handed each message's event name and its JSON, already sanitised. */
export type EventSink = (event: string, data: string) => void;

/** How long the hub gathers events before it sends them: the most a client waits for one. */
export const FLUSH_MS = 50;

/**
 * The fleet's events, fanned out to every open `GET /api/events` stream, each serialised and sanitised once
 * ({@link clean}) whatever the number of clients.
 *
 * Invariant (coalescing): every client receives the fleet's events in the order they happened, at most
 * {@link FLUSH_MS} late, except that a `task` event is dropped when a later `task` event of the same id
 * arrives within the same window (the later snapshot then takes its place at the end, after every event
 * before it), and likewise a `fleet` event by a later `fleet` event. So a burst over 2,000 tasks costs one
 * message per task per window, and the last message a client got of a task is always its latest state.
 */
export class EventHub {
  readonly #sinks = new Set<EventSink>();
  /** what the next flush sends, in order; a coalesced key is deleted and set again to move it last */
  readonly #pending = new Map<string, { event: string; payload: unknown }>();
  readonly #unsubscribe: () => void;
  readonly #flushMs: number;
  #seq = 0;
  #timer: NodeJS.Timeout | null = null;

  /** `waitingForReview`: the row's review wait ({@link FleetView.waitingForReview}); none when absent */
  constructor(
    events: FleetEmitter,
    flushMs = FLUSH_MS,
    waitingForReview: (id: string) => ReviewWait | null = () => null,
  ) {
    this.#flushMs = flushMs;
    const handlers: Array<[keyof FleetEvents, (payload: never) => void]> = [];
    const on = <K extends keyof FleetEvents>(name: K, handler: (...args: FleetEvents[K]) => void) => {
      events.on(name, handler as never);
      handlers.push([name, handler as never]);
    };
    on('task', ({ task, previousStatus }) =>
      this.#queue(`task:${task.id}`, 'task', { task: taskRow(task, waitingForReview(task.id)), previousStatus }),
    );
    on('fleet', (summary) => this.#queue('fleet', 'fleet', summary));
    for (const name of EVENT_NAMES) {
      if (name === 'task' || name === 'fleet') continue;
      on(name, (payload) => this.#queue(`#${this.#seq++}`, name, payload));
    }
    this.#unsubscribe = () => {
      for (const [name, handler] of handlers) events.off(name, handler as never);
    };
  }

  /** Adds a stream; returns what removes it. */
  subscribe(sink: EventSink): () => void {
    this.#sinks.add(sink);
    return () => this.#sinks.delete(sink);
  }

  get subscribers(): number {
    return this.#sinks.size;
  }

  /** Stops listening to the fleet and drops what was not sent. */
  close(): void {
    this.#unsubscribe();
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    this.#pending.clear();
    this.#sinks.clear();
  }

  #queue(key: string, event: string, payload: unknown): void {
    if (this.#sinks.size === 0) return; // nobody listens: nothing to keep
    this.#pending.delete(key);
    this.#pending.set(key, { event, payload });
    this.#timer ??= setTimeout(() => this.#flush(), this.#flushMs);
  }

  #flush(): void {
    this.#timer = null;
    const batch = [...this.#pending.values()];
    this.#pending.clear();
    for (const { event, payload } of batch) {
      const data = jsonText(clean(payload));
      for (const sink of this.#sinks) sink(event, data);
    }
  }
}
