import { openTelemetry } from '../adapters/telemetry/otel-open.js';
import type { Fleet } from '../core/fleet/fleet.js';
import { recordFleet, type FleetTelemetry, type RecorderOptions } from '../core/telemetry/recorder.js';
import { visible } from '../domain/sanitize.js';
import { noopTelemetry, type Telemetry } from '../ports/telemetry.js';

/** What a coordinator tells the recorder: its queue's depth and workers, and that workers record the phases. */
export type TelemetrySources = Pick<RecorderOptions, 'queueDepth' | 'workers' | 'phaseSpans'>;

/**
 * A session's OpenTelemetry: opened before the lock (a bad `OTEL_EXPORTER_OTLP_*ENDPOINT` is bad input,
 * exit 2, nothing written), attached to the fleet once it exists, closed with the session — the open spans
 * ended, everything flushed — whether the run ended, was interrupted, or failed to start.
 *
 * Its warnings (the SDK's own, an export that failed) go to the fleet's log while something prints it (the
 * headless printer, the view), else to stderr.
 */
export class SessionTelemetry {
  #telemetry: Telemetry = noopTelemetry;
  #fleet: Fleet | null = null;
  #recorder: FleetTelemetry | null = null;
  #closing: Promise<void> | null = null;

  private constructor() {}

  /** what the environment asks for; its warnings at start (an unsupported protocol) go to stderr */
  static async open(env: NodeJS.ProcessEnv): Promise<SessionTelemetry> {
    const session = new SessionTelemetry();
    session.#telemetry = await openTelemetry(env, { warn: (message) => session.warn(message) });
    return session;
  }

  /** the recorder, once attached and when telemetry is on */
  get recorder(): FleetTelemetry | null {
    return this.#recorder;
  }

  /**
   * The W3C traceparent of a running attempt's span, for the job that runs it on a worker; usable before
   * the recorder exists (null until then, and with telemetry off).
   */
  readonly traceparentOf = (taskId: string, attempt: number): string | null =>
    this.#recorder?.attemptTraceparent(taskId, attempt) ?? null;

  /** subscribes to the fleet's events; call before `fleet.open` so a resumed task's first events are heard */
  attach(fleet: Fleet, sources: TelemetrySources = {}): void {
    this.#fleet = fleet;
    this.#recorder = recordFleet(this.#telemetry, fleet.events, { counts: () => fleet.summary().counts, ...sources });
  }

  warn(message: string): void {
    const fleet = this.#fleet;
    if (fleet !== null && fleet.events.listenerCount('log') > 0) fleet.events.emit('log', { level: 'warn', message });
    else process.stderr.write(`loopfleet: warning: ${visible(message)}\n`);
  }

  /** ends the open spans and exports what is left; a collector that fails or does not answer is a warning, within the flush timeout */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#recorder?.close();
      await this.#telemetry
        .shutdown()
        .catch((error: Error) =>
          this.warn(`OpenTelemetry: the last traces and metrics could not be exported: ${error.message}`),
        );
    })();
    return this.#closing;
  }
}
