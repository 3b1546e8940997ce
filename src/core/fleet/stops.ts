/**
 * Why the fleet stopped on its own, and the stop itself: a fleet gate, a full disk, a machine limit, or a
 * rate limit under --no-wait. Each is said once, in one line; only the first of each kind is recorded, and
 * none stops a fleet that is already stopping.
 */
import { DiskFullError, StopError, type GateError, type ResourceLimitError } from '../../domain/errors.js';
import type { GateName } from '../../domain/types.js';
import type { FleetEmitter } from '../task/events.js';

export interface StopCauseServices {
  events: FleetEmitter;
  /** the fleet's stop(): resolves once everything it started has ended */
  stop: (reason: Error) => Promise<void>;
  /** true once the fleet was asked to stop */
  stopping: () => boolean;
}

export class StopCauses {
  readonly #s: StopCauseServices;
  #gate: GateName | null = null;
  #diskFull: DiskFullError | null = null;
  #limit: ResourceLimitError | null = null;

  constructor(services: StopCauseServices) {
    this.#s = services;
  }

  /** the fleet gate that stopped the run, if one did */
  get gate(): GateName | null {
    return this.#gate;
  }

  /** the full disk that stopped the run, if one did */
  get diskFull(): DiskFullError | null {
    return this.#diskFull;
  }

  /** the limit (open files, memory) that stopped the run, if one did */
  get limit(): ResourceLimitError | null {
    return this.#limit;
  }

  /** A fleet gate tripped: its `gate` event, then the stop. */
  gateTripped(gate: GateError): void {
    if (this.#s.stopping()) return;
    this.#gate = gate.gate;
    this.#s.events.emit('gate', { scope: 'fleet', id: null, gate: gate.gate, reason: gate.message });
    void this.#s.stop(gate);
  }

  /**
   * The machine ran out of open files or memory: the run stops at once, said in one line; the attempts it
   * was in are queued again, not charged (nothing an agent did caused it).
   */
  resourceLimit(error: ResourceLimitError): void {
    if (this.#limit !== null) return;
    this.#limit = error;
    this.#s.events.emit('log', { level: 'error', message: error.message });
    void this.#s.stop(new StopError(error.message.slice(0, error.message.indexOf(':')))).catch(() => undefined);
  }

  /** A state save that failed for a full disk stops the run: nothing more is spent that could not be recorded. */
  saveFailed(error: Error): void {
    if (!(error instanceof DiskFullError) || this.#diskFull !== null) return;
    this.#diskFull = error;
    this.#s.events.emit('log', { level: 'error', message: error.message });
    void this.#s.stop(new StopError('disk full')).catch(() => undefined);
  }

  /** A rate or usage limit under --no-wait: the run stops instead of holding. */
  rateLimited(reason: string): void {
    this.#s.events.emit('log', { level: 'warn', message: `stopping: ${reason}` });
    void this.#s.stop(new StopError(reason));
  }
}
