import type { EndedAttempt } from '../task/transitions.js';
import type { FleetEmitter } from '../task/events.js';
import type { FleetState } from '../task/state.js';
import { inheritFromParent, parseBacklog } from '../backlog/parse.js';
import { partLines, type PlannedPart } from '../roles/plan-parts.js';
import type { TaskSpec, TaskState } from '../../domain/types.js';
import type { BacklogView } from './backlog-view.js';

export interface DecompositionServices {
  state: () => FleetState;
  backlog: BacklogView;
  events: FleetEmitter;
  /** writes the parts' lines under their task in BACKLOG.md (see {@link FleetServices.writeParts}) */
  writeParts?: (parent: string, lines: string) => Promise<boolean>;
  /** BACKLOG.md's path, for the log */
  path: string;
}

/**
 * A `split: auto` task's parts: written under it in BACKLOG.md, run as tasks of their own, and followed to
 * the end. Invariants:
 * - a part is exactly what BACKLOG.md will say once it is read again: its spec is parsed from the lines
 *   written, so a later read changes nothing; its unset keys are its task's;
 * - parts that share a planned file land one after another (`after:`), the others run at once;
 * - a part that fails or is discarded stops the parts that land after it, and its task fails naming it; the
 *   other parts keep what they did.
 */
export class Decomposition {
  readonly #s: DecompositionServices;
  /** work started and not yet ended: writes to BACKLOG.md */
  #writes: Promise<unknown> = Promise.resolve();

  constructor(services: DecompositionServices) {
    this.#s = services;
  }

  /** Split task `spec` into `parts` (its explorer's answer, `plan`); `ended`: the attempt that planned them. */
  split(spec: TaskSpec, parts: readonly PlannedPart[], plan: string, ended: EndedAttempt): void {
    const state = this.#s.state();
    const taken = new Set([...this.#s.backlog.order, ...state.all().map((t) => t.id)]);
    const ids: string[] = [];
    for (let n = 1; ids.length < parts.length; n++) if (!taken.has(`${spec.id}.${n}`)) ids.push(`${spec.id}.${n}`);
    const lines = partLines(spec.id, ids, parts);
    // Parsed from the very lines written, under a bare item of the task: what a later read of BACKLOG.md gives.
    const specs = parseBacklog(`- [ ] ${spec.id} ${spec.title}\n${lines}\n`, this.#s.path).backlog.tasks.slice(1);
    for (const part of specs) {
      inheritFromParent(part, spec);
      part.line = spec.line;
    }
    state.lifecycle.split(spec.id, ids, plan, ended);
    this.#s.backlog.addParts(spec.id, specs);
    this.#s.backlog.ensure(state);
    const order = specs.map((p) => (p.after.length === 0 ? p.id : `${p.id} after ${p.after.join(', ')}`));
    this.#s.events.emit('log', { level: 'info', id: spec.id, message: `split into parts: ${order.join('; ')}` });
    this.#s.events.emit('backlog', { added: ids, removed: [] });
    const write = this.#s.writeParts;
    if (write === undefined) return;
    this.#writes = this.#writes.then(() =>
      write(spec.id, lines).then(
        (written) => {
          if (!written)
            this.#s.events.emit('log', {
              level: 'warn',
              id: spec.id,
              message: `its parts were not written to ${this.#s.path}: the item is gone or has parts already`,
            });
        },
        (error: unknown) =>
          this.#s.events.emit('log', {
            level: 'error',
            id: spec.id,
            message: `could not write its parts to ${this.#s.path}: ${error instanceof Error ? error.message : String(error)}`,
          }),
      ),
    );
  }

  /**
   * A part failed or was discarded: the queued parts that land after it (directly or through others) fail
   * saying so, and its task, while it waits for its parts, fails naming the part and why.
   */
  partStopped(part: Readonly<TaskState>, parent: string): void {
    const { lifecycle } = this.#s.state();
    const specs = this.#s.backlog.specs;
    const stopped = new Set([part.id]);
    for (let grew = true; grew; ) {
      grew = false;
      for (const [id, spec] of specs) {
        if (spec.parent !== parent || stopped.has(id) || !spec.after.some((a) => stopped.has(a))) continue;
        stopped.add(id);
        grew = true;
        if (lifecycle.get(id)?.status === 'queued')
          lifecycle.fail(id, { gate: null, reason: `stopped: it lands after ${part.id}, which ${part.status}` });
      }
    }
    if (lifecycle.get(parent)?.status === 'queued')
      lifecycle.fail(parent, {
        gate: null,
        reason: `part ${part.id} ${part.status}${part.reason === null ? '' : `: ${part.reason}`}`,
      });
  }

  /** Resolves once every write to BACKLOG.md started so far has ended. */
  settled(): Promise<unknown> {
    return this.#writes;
  }
}
