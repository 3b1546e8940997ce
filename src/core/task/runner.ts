import { GateError, RateLimitError, ResourceLimitError, StopError } from '../../domain/errors.js';
import { FleetHeldError, type LimitGate } from '../budget/rate-limits.js';
import { TaskBudget, errorSignature, failureSignature, taskGates, type FleetBudget } from '../budget/gates.js';
import type { AttemptInput, AttemptObserver, AttemptResult, CallBudget } from '../attempt/attempt-io.js';
import type { AttemptExecutor } from '../executor/attempt-executor.js';
import type { FleetEmitter } from './events.js';
import type { TaskLifecycle } from './lifecycle.js';
import type { EndedAttempt } from './transitions.js';
import type { TaskPaths } from '../../domain/layout.js';
import type { AgentEvent } from '../../ports/model.js';
import type { Clock } from '../../ports/clock.js';
import type { Workspace } from '../../ports/workspace.js';
import type { GitPort } from '../../ports/git.js';
import { CandidateRound, type RoundResult } from './candidates.js';
import { personEnv, taskEnv } from '../attempt/task-env.js';
import { vetoesOf, type Lessons } from '../roles/lessons.js';
import { autonomyOf } from '../../domain/task-rules.js';
import type { PortPool } from '../attempt/port-pool.js';
import {
  totalTokens,
  type AttemptRecord,
  type CandidateRecord,
  type FleetConfig,
  type Phase,
  type Role,
  type TaskSpec,
  type TaskState,
  type Usage,
} from '../../domain/types.js';
import { firstOverlap, plannedFiles, type Claim } from '../roles/plan-files.js';
import { failureEvidence } from '../roles/prompts.js';
import { plannedParts, type PlannedPart } from '../roles/plan-parts.js';

/** Books one usage report (prices it, adds it to the task, its attempt, the fleet) and tells subscribers. */
export interface UsageBook {
  book(id: string, role: Role, model: string, delta: Usage, reportedUsd?: number): void;
}

/** What the task runner is built with, once per fleet. */
export interface TaskRunnerServices {
  lifecycle: TaskLifecycle;
  /** where attempts run: the fleet's pipeline in this process, or workers behind a queue */
  executor: AttemptExecutor;
  events: FleetEmitter;
  clock: Clock;
  workspace: Workspace;
  /** best-of-N rounds keep and remove their candidates' branches and worktrees */
  git: GitPort;
  ports: PortPool;
  paths: TaskPaths;
  usage: UsageBook;
  fleetBudget: FleetBudget;
  /** rate and usage limits: refuses calls while the fleet holds, hears of limits and of answered calls */
  limits: LimitGate;
  lessons: Lessons;
  /** the planned files of the other tasks that may still change base (running, verified, …), backlog order */
  claims: (id: string) => Claim[];
  /** the fleet's own stop signal: quit, SIGINT, or a fleet gate */
  stop: AbortSignal;
  /**
   * A `split: auto` task's explorer answered with parts: the fleet writes them under the task and the task
   * waits for them (see {@link TaskLifecycle.split}); `ended` is the attempt that planned them.
   */
  split: (spec: TaskSpec, parts: PlannedPart[], plan: string, ended: EndedAttempt) => void;
  /** the machine ran out of open files or memory: the fleet stops (see Fleet.resourceLimit) */
  limitHit: (error: ResourceLimitError) => void;
  repoRoot: string;
  base: string;
  parentEnv: NodeJS.ProcessEnv;
}

/** How an attempt ended, as the run loop needs it: the task is settled, or another attempt follows. */
type Settled = { done: true } | { done: false; evidence: string | null };

/**
 * Runs a task's attempts until it is verified, a gate stops it, or the fleet stops.
 *
 * Invariant: the task is `running` exactly while run() is inside an attempt; every exit path sets a final
 * status (verified / failed) or puts it back to `queued` (fleet stopping, or a rate or usage limit), so a
 * crash is the only way to leave `running` behind — and the lifecycle's requeueCrashed treats that as an
 * interrupted attempt.
 */
export class TaskRunner {
  readonly #s: TaskRunnerServices;
  readonly #round: CandidateRound;

  constructor(services: TaskRunnerServices) {
    this.#s = services;
    this.#round = new CandidateRound(services);
  }

  async run(spec: TaskSpec, config: FleetConfig): Promise<void> {
    const life = this.#s.lifecycle;
    const budget = new TaskBudget(taskGates(spec, config));
    let evidence = lastEvidence(life.get(spec.id)?.attempts ?? []);
    for (;;) {
      const task = life.get(spec.id);
      if (task === undefined) return;
      const over = budget.beforeAttempt(task);
      if (over !== null) {
        this.#failGate(spec.id, over);
        return;
      }
      // The fleet is stopping or over its own budget: the task stays queued for a later run.
      if (this.#s.stop.aborted || this.#s.fleetBudget.check() !== null) return;
      const settled = await this.#attempt(spec, config, budget, task, evidence);
      if (settled.done) return;
      evidence = settled.evidence;
    }
  }

  /** One attempt: start it, run it (the executor) under the gates, record how it ended, decide what follows. */
  async #attempt(
    spec: TaskSpec,
    config: FleetConfig,
    budget: TaskBudget,
    task: Readonly<TaskState>,
    evidence: string | null,
  ): Promise<Settled> {
    const { lifecycle: life, clock, paths } = this.#s;
    const id = spec.id;
    const worktree = paths.worktreeOf(id);
    const branch = paths.branchOf(id);
    const n = task.budget.fromAttempt + budget.roundsUsed(task) + 1;
    const started = clock.now();
    const elapsedBefore = task.elapsedMs;
    const verifyOnly = task.verifyOnly;
    // Read before startAttempt clears it: a task that waited implements on base as it is now.
    const waited = (task.waitingFor ?? null) !== null;
    const previousPlan = task.attempts.findLast((a) => a.plan !== null)?.plan ?? null;
    // Read before startAttempt adds this round's record: how many candidates the gates leave it.
    const candidates = verifyOnly || !this.#round.supported ? 1 : budget.candidatesLeft(task, parallelOf(spec, config));
    const firstK = 1 + task.attempts.reduce((sum, a) => sum + (a.candidates?.length ?? 0), 0);

    const controller = new AbortController();
    const onStop = () => controller.abort(this.#s.stop.reason);
    this.#s.stop.addEventListener('abort', onStop, { once: true });
    const disarm = budget.armTimer(task, (gate) => controller.abort(gate));
    const port = this.#s.ports.acquire(id);
    life.startAttempt(id, n, branch);
    this.#transcript(id, n, { type: 'attempt-start', attempt: n, base: this.#s.base, branch });

    const tick = () => life.recordTime(id, elapsedBefore + (clock.now() - started));
    /**
     * The gate that has tripped, if any: the task's own first (its clock brought up to date), so a task over
     * its own limit fails now rather than waiting for a next run; then the fleet's stop or budget.
     */
    const tripped = (): unknown => {
      tick();
      const own = budget.check(life.get(id)!);
      if (own !== null) return own;
      if (this.#s.stop.aborted) return this.#s.stop.reason;
      return this.#s.fleetBudget.check();
    };
    const callBudget: CallBudget = {
      beforeCall: () => {
        if (controller.signal.aborted) throw controller.signal.reason;
        const over = tripped();
        if (over !== null) throw over;
        this.#s.limits.beforeCall();
      },
      remainingMs: () => budget.remainingMs(task, elapsedBefore + (clock.now() - started)),
    };
    /** the parts the explorer answered with, once planned() has read them */
    let splitInto: PlannedPart[] | null = null;
    const observer: AttemptObserver = {
      phase: (phase) => {
        tick();
        life.setPhase(id, phase);
        this.#transcript(id, n, { type: 'phase', phase });
      },
      agentEvent: (role, model, event) => {
        this.#agentEvent(id, n, role, model, event);
        // During a call a tripped gate aborts it; before a call, beforeCall refuses to start one.
        if (event.type === 'usage') {
          // A refusal may report an empty usage; only tokens mean the model answered.
          if (totalTokens(event.usage) > 0) this.#s.limits.answered();
          const over = tripped();
          if (over !== null) controller.abort(over);
        }
      },
      notice: (message, level) => this.#s.events.emit('log', { level, id, message }),
      planned: (plan) => {
        if (spec.split === 'auto' && spec.parent === undefined) {
          const read = plannedParts(plan);
          // The task itself stands as the one it waits for: its parts, which the split below writes.
          if (read !== null && 'parts' in read) {
            splitInto = read.parts;
            return { id, files: [] };
          }
          if (read !== null)
            this.#s.events.emit('log', {
              level: 'warn',
              id,
              message: `the explorer's parts were not taken (${read.problem}): its answer is implemented as a plan`,
            });
        }
        const files = plannedFiles(plan);
        const blocker = files === null ? null : firstOverlap(files, this.#s.claims(id));
        if (blocker === null) life.recordPlan(id, plan);
        return blocker;
      },
      worker: (worker) => life.setWorker(id, worker),
      flagged: (worker, reason) => life.flagWorker(id, { worker, attempt: n, reason }),
      output: (phase: Phase, chunk: string) => {
        this.#s.events.emit('phase-output', { id, phase, chunk });
        this.#transcript(id, n, { type: 'output', phase, chunk });
      },
    };

    let result: AttemptResult | null = null;
    let round: Pick<RoundResult, 'candidates' | 'chosen'> | null = null;
    let error: unknown = null;
    const envInput = {
      taskId: id,
      worktree,
      branch,
      base: this.#s.base,
      gitRoot: this.#s.repoRoot,
      port,
      passed: config.env,
    };
    try {
      const input: AttemptInput = {
        spec,
        config,
        base: this.#s.base,
        repoRoot: this.#s.repoRoot,
        worktree,
        branch,
        attempt: n,
        // startAttempt numbered the earlier runs of attempt n that were interrupted -n.
        rerun: (life.get(id)?.attempts ?? []).filter((a) => a.n === -n).length,
        verifyOnly,
        previousPlan,
        approvedPlan: task.approvedPlan ?? null,
        stopAfterPlan: autonomyOf(spec, config) === 'plan' && (task.approvedPlan ?? null) === null,
        rebaseFirst: waited,
        env: taskEnv(this.#s.parentEnv, envInput),
        hostEnv: personEnv(this.#s.parentEnv, envInput),
        evidence,
        signal: controller.signal,
        observer,
        budget: callBudget,
      };
      if (candidates >= 2) {
        const ran = await this.#round.run(input, {
          count: candidates,
          firstK,
          review: spec.review ?? config.review,
          cutShort: (kept) => {
            round = { candidates: kept, chosen: null };
          },
          envFor: (cWorktree, cBranch, cPort) => {
            const cInput = { ...envInput, worktree: cWorktree, branch: cBranch, port: cPort };
            return { env: taskEnv(this.#s.parentEnv, cInput), hostEnv: personEnv(this.#s.parentEnv, cInput) };
          },
        });
        result = ran.result;
        if (ran.candidates.length > 0) round = { candidates: ran.candidates, chosen: ran.chosen };
      } else result = await this.#s.executor.run(input);
    } catch (caught) {
      error = controller.signal.aborted && controller.signal.reason !== undefined ? controller.signal.reason : caught;
    } finally {
      disarm();
      this.#s.stop.removeEventListener('abort', onStop);
      this.#s.ports.release(id);
      tick();
    }

    const endedAt = new Date(clock.now()).toISOString();
    // A round cut short keeps its candidates in the record: their refs, and the numbers the next round skips.
    if (error !== null)
      return await this.#settleError(id, n, budget, error, {
        endedAt,
        ...(round === null ? {} : { candidates: round.candidates }),
      });
    const r = result!;
    const ended = {
      n,
      record: {
        outcome: r.outcome,
        reason: r.reason,
        endedAt,
        plan: r.plan,
        setup: r.setup,
        check: r.check,
        guard: r.guard,
        verdict: r.verdict,
        commit: r.commit,
        diffStat: r.diffStat,
        evidence: r.evidence,
        checks: r.checks,
        baseline: r.baseline,
        proof: r.proof,
        ...(round === null ? {} : { candidates: round.candidates, chosen: round.chosen }),
      },
    };
    if (splitInto !== null && r.waitingFor?.id === id) {
      this.#s.split(spec, splitInto, r.plan ?? '', ended);
      this.#attemptEnd(id, ended);
      return { done: true };
    }
    if (r.waitingFor !== undefined) {
      life.waitFor(id, r.waitingFor, r.plan ?? '', ended);
      this.#attemptEnd(id, ended);
      this.#s.events.emit('log', { level: 'info', id, message: r.reason ?? 'waiting' });
      return { done: true };
    }
    if (r.awaitingApproval === true) {
      // Recorded `interrupted`: stopping for approval is not a failed attempt (the attempts gate skips it).
      life.awaitApproval(
        id,
        `the plan awaits approval: a (or loopfleet approve ${id}) approves it, e edits it first, d discards`,
        ended,
      );
      this.#attemptEnd(id, ended);
      return { done: true };
    }
    if (r.outcome === 'unchanged' && spec.everyMs !== undefined) {
      // The next run counts from the end of this one, the time its run record carries.
      life.reschedule(id, spec.everyMs, 'unchanged', ended);
      this.#attemptEnd(id, ended);
      return { done: true };
    }
    if (r.outcome === 'verified') {
      life.verify(id, ended);
      this.#attemptEnd(id, ended);
      return { done: true };
    }
    this.#finish(id, {
      n,
      record: { ...ended.record, fingerprint: failureSignature(r.outcome, r.evidence ?? '').key },
    });
    this.#s.events.emit('log', { level: 'info', id, message: `attempt ${n}: ${r.reason ?? r.outcome}` });
    if (r.outcome === 'vetoed') await this.#learnFromVetoes(id);
    const stuck = budget.noProgress(life.get(id)!);
    if (stuck !== null) return this.#failGate(id, stuck);
    return { done: false, evidence: r.evidence };
  }

  /** An attempt that threw: a task gate fails the task, a fleet stop requeues it, anything else is evidence. */
  async #settleError(id: string, n: number, budget: TaskBudget, error: unknown, at: EndedBase): Promise<Settled> {
    const limit = ResourceLimitError.of(error);
    if (limit !== null) this.#s.limitHit(limit);
    else if (
      !(
        error instanceof GateError ||
        error instanceof StopError ||
        error instanceof RateLimitError ||
        error instanceof FleetHeldError
      )
    ) {
      // A failed spawn may surface first as another error (a library reading the child it never got) while
      // its EMFILE comes as an 'error' event a tick later: let that arrive before the attempt is charged.
      await new Promise((done) => setImmediate(done));
    }
    if (error instanceof GateError && error.scope === 'task') {
      return this.#failGate(id, error, { n, record: { outcome: 'gate', reason: error.message, ...at } });
    }
    if (error instanceof RateLimitError || error instanceof FleetHeldError) {
      const limited = this.#limited(id, n, error, at);
      if (limited !== null) return limited;
    }
    if (error instanceof GateError || error instanceof StopError || this.#s.stop.aborted) {
      // The fleet is stopping: nothing half-done stands; the attempt restarts on the next run. What the
      // attempt saw as it was cut off is a symptom; the stop's own reason says why.
      const stop = this.#s.stop.aborted ? (this.#s.stop.reason as unknown) : null;
      const cause =
        error instanceof GateError || error instanceof StopError || !(stop instanceof StopError) ? error : stop;
      const reason = cause instanceof Error ? cause.message : String(cause);
      const ended = { n, record: { outcome: 'interrupted' as const, reason, ...at } };
      this.#s.lifecycle.requeue(id, { kind: 'interrupted', reason }, ended);
      this.#attemptEnd(id, ended);
      return { done: true };
    }
    const message = error instanceof Error ? error.message : String(error);
    const evidence = failureEvidence('the attempt stopped with an error', '', [
      { label: "the error's message (it may quote an agent's output)", text: message },
    ]);
    this.#finish(id, {
      n,
      record: { outcome: 'error', reason: message, ...at, evidence, fingerprint: errorSignature(message).key },
    });
    this.#s.events.emit('log', { level: 'warn', id, message: `attempt ${n} failed: ${message}` });
    const stuck = budget.noProgress(this.#s.lifecycle.get(id)!);
    if (stuck !== null) return this.#failGate(id, stuck);
    return { done: false, evidence };
  }

  /**
   * A limit (or a call refused while the fleet holds for one) is not the task's fault: the attempt is
   * interrupted and the task queued again, its attempt not used up — unless --no-wait fails it. Null: the
   * fleet is stopping anyway, which settles it like any stop.
   */
  #limited(id: string, n: number, error: RateLimitError | FleetHeldError, at: EndedBase): Settled | null {
    if (error instanceof RateLimitError && this.#s.limits.limited(error) === 'fail') {
      this.#s.events.emit('log', { level: 'warn', id, message: `attempt ${n} failed: ${error.message}` });
      this.#s.lifecycle.fail(
        id,
        { gate: null, reason: error.message },
        { n, record: { outcome: 'error', reason: error.message, ...at } },
      );
      this.#attemptEnd(id, { n, record: { outcome: 'error', reason: error.message, ...at } });
      return { done: true };
    }
    if (this.#s.stop.aborted) return null;
    const ended = { n, record: { outcome: 'interrupted' as const, reason: error.message, ...at } };
    this.#s.lifecycle.requeue(id, { kind: 'interrupted', reason: error.message }, ended);
    this.#attemptEnd(id, ended);
    if (error instanceof RateLimitError)
      this.#s.events.emit('log', { level: 'warn', id, message: `attempt ${n} paused, not used up: ${error.message}` });
    return { done: true };
  }

  /** A veto reason the reviewer has now given in two tasks becomes a lesson; a broken lessons file is only logged. */
  async #learnFromVetoes(id: string): Promise<void> {
    try {
      for (const lesson of await this.#s.lessons.learnFromVetoes(vetoesOf(this.#s.lifecycle.all()))) {
        this.#s.events.emit('log', { level: 'info', id, message: `lesson kept: ${lesson}` });
      }
    } catch (error) {
      this.#s.events.emit('log', {
        level: 'warn',
        id,
        message: `lessons: ${error instanceof Error ? error.message : String(error)}`,
      });
    }
  }

  #agentEvent(id: string, n: number, role: Role, model: string, event: AgentEvent): void {
    const events = this.#s.events;
    switch (event.type) {
      case 'text':
        events.emit('agent-text', { id, role, attempt: n, text: event.text });
        this.#transcript(id, n, { type: 'text', role, text: event.text });
        return;
      case 'tool':
        events.emit('tool-call', { id, role, attempt: n, name: event.name, input: event.input });
        this.#transcript(id, n, { type: 'tool', role, name: event.name, input: event.input });
        return;
      case 'tool-result':
        this.#transcript(id, n, {
          type: 'tool-result',
          role,
          name: event.name,
          output: event.output,
          isError: event.isError,
        });
        return;
      case 'usage':
        this.#s.usage.book(id, role, event.model || model, event.usage, event.costUsd);
        this.#transcript(id, n, { type: 'usage', role, model, usage: event.usage });
        return;
    }
  }

  /** A failed attempt is recorded; what follows (another attempt, or a gate) is decided after. */
  #finish(id: string, ended: EndedAttempt): void {
    this.#s.lifecycle.finishAttempt(id, ended);
    this.#attemptEnd(id, ended);
  }

  #attemptEnd(id: string, { n, record }: EndedAttempt): void {
    this.#transcript(id, n, { type: 'attempt-end', outcome: record.outcome, reason: record.reason ?? null });
  }

  #failGate(id: string, gate: GateError, ended?: EndedAttempt): Settled {
    this.#s.events.emit('gate', { scope: 'task', id, gate: gate.gate, reason: gate.message });
    this.#s.lifecycle.fail(id, { gate: gate.gate, reason: gate.message }, ended);
    if (ended !== undefined) this.#attemptEnd(id, ended);
    return { done: true };
  }

  #transcript(id: string, attempt: number, record: Record<string, unknown>): void {
    this.#s.workspace.transcript(id, attempt, { t: new Date(this.#s.clock.now()).toISOString(), ...record });
  }
}

/** What every record of an attempt that ended in an error carries: when, and a round's candidates. */
interface EndedBase {
  endedAt: string;
  candidates?: CandidateRecord[];
}

function lastEvidence(attempts: readonly AttemptRecord[]): string | null {
  for (let i = attempts.length - 1; i >= 0; i--) {
    const a = attempts[i]!;
    if (a.outcome !== 'interrupted' && a.outcome !== 'running') return a.evidence;
  }
  return null;
}

/** A task's candidates per attempt round: its own `parallel:` over the front matter's. */
function parallelOf(spec: TaskSpec, config: FleetConfig): number {
  return spec.parallel ?? config.parallel ?? 1;
}
