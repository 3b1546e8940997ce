import { basename } from 'node:path';
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
 *   other parts keep what they did;
 * - BACKLOG.md is the person's: once its parts are written, a split task waits for the parts it lists — a
 *   part removed before it landed is no longer waited for, an item `T-7.n` added by hand is waited for too,
 *   and a task left with no part fails saying which were removed (`r` then plans it afresh). A part that
 *   landed stays one when its line goes: its work is on base.
 */
export class Decomposition {
  readonly #s: DecompositionServices;
  /** work started and not yet ended: writes to BACKLOG.md */
  #writes: Promise<unknown> = Promise.resolve();
  /** split tasks whose parts are not written to BACKLOG.md yet: a read of it does not list them */
  readonly #unwritten = new Set<string>();

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
    this.#unwritten.add(spec.id);
    this.#writes = this.#writes.then(() =>
      write(spec.id, lines)
        .finally(() => this.#unwritten.delete(spec.id))
        .then(
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

  /**
   * BACKLOG.md was read again (or at start): each split task, queued or failed, waits for the parts it lists
   * now — see the class invariants. Says what changed in the log.
   */
  reconcile(): void {
    const { lifecycle } = this.#s.state();
    const { specs, order } = this.#s.backlog;
    for (const task of lifecycle.all()) {
      const before = task.parts ?? [];
      if (before.length === 0 || this.#unwritten.has(task.id)) continue;
      if (task.status !== 'queued' && task.status !== 'failed') continue;
      const gone = before.filter((id) => !specs.has(id) && lifecycle.get(id)?.status !== 'merged');
      const added = order.filter((id) => specs.get(id)?.parent === task.id && !before.includes(id));
      if (gone.length === 0 && added.length === 0) continue;
      const parts = [...before.filter((id) => !gone.includes(id)), ...added];
      lifecycle.setParts(task.id, parts);
      const removed = `${gone.length === 1 ? `its part ${gone[0]} was` : `its parts ${gone.join(', ')} were`} removed from ${basename(this.#s.path)}`;
      if (parts.length === 0) {
        if (task.status === 'queued') lifecycle.fail(task.id, { gate: null, reason: `${removed}; r plans it again` });
        else this.#say(task.id, 'warn', `${removed}: it has no part left; r plans it again`);
        continue;
      }
      if (gone.length > 0)
        this.#say(task.id, 'info', `${removed}: it no longer waits for ${gone.length === 1 ? 'it' : 'them'}`);
      if (added.length > 0)
        this.#say(
          task.id,
          'info',
          `${added.join(', ')} added under it in ${basename(this.#s.path)}: it waits for ${added.length === 1 ? 'it' : 'them'} too`,
        );
    }
  }

  /** Resolves once every write to BACKLOG.md started so far has ended. */
  settled(): Promise<unknown> {
    return this.#writes;
  }

  #say(id: string, level: 'info' | 'warn', message: string): void {
    this.#s.events.emit('log', { level, id, message });
  }
}
