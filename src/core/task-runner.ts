import { GateError, StopError } from '../domain/errors.js';
import { checkTaskGates, failureFingerprint } from './gates.js';
import type { Pipeline } from './pipeline.js';
import type { FleetEmitter } from './events.js';
import type { FleetState } from './state.js';
import type { AgentEvent } from '../ports/model.js';
import type { Clock } from '../ports/clock.js';
import { taskEnv } from './task-env.js';
import { newAttempt } from './attempt.js';
import type { PortPool } from './port-pool.js';
import { type AttemptRecord, type FleetConfig, type Role, type TaskGates, type TaskSpec, type TaskStatus } from '../domain/types.js';

/** What one task's run needs from its fleet. */
export interface TaskRunContext {
  state: FleetState;
  events: FleetEmitter;
  pipeline: Pipeline;
  clock: Clock;
  ports: PortPool;
  repoRoot: string;
  base: string;
  worktreeOf: (id: string) => string;
  branchOf: (id: string) => string;
  parentEnv: NodeJS.ProcessEnv;
  /** the fleet's own stop signal: quit, SIGINT, or a fleet gate */
  fleetSignal: AbortSignal;
  /** throws when a fleet gate has tripped */
  checkFleet: () => void;
  /** accounts a usage delta: prices it, adds it to the task, the attempt and the fleet; returns its cost */
  account: (id: string, role: Role, model: string, delta: AgentEvent & { type: 'usage' }) => void;
  setStatus: (id: string, status: TaskStatus, change?: (t: import('../domain/types.js').TaskState) => void) => void;
  transcript: (id: string, attempt: number, record: Record<string, unknown>) => void;
}

export function taskGates(spec: TaskSpec, config: FleetConfig): TaskGates {
  return {
    attempts: spec.attempts ?? config.gates.attempts,
    tokens: spec.tokens ?? config.gates.tokens,
    timeMs: spec.timeMs ?? config.gates.timeMs,
    costUsd: spec.costUsd ?? config.gates.costUsd,
  };
}


/**
 * Runs a task's attempts until it is verified, a gate stops it, or the fleet stops.
 *
 * Invariant: the task is `running` exactly while this function is inside an attempt; every exit path sets
 * a final status (verified / failed) or puts it back to `queued` (fleet stopping), so a crash is the only
 * way to leave `running` behind — and resume treats that as an interrupted attempt.
 */
export async function runTask(ctx: TaskRunContext, spec: TaskSpec, config: FleetConfig): Promise<void> {
  const id = spec.id;
  const gates = taskGates(spec, config);
  const worktree = ctx.worktreeOf(id);
  const branch = ctx.branchOf(id);
  let evidence = lastEvidence(ctx.state.get(id)?.attempts ?? []);

  for (;;) {
    const task = ctx.state.get(id);
    if (task === undefined) return;
    const finished = task.attempts.filter((a) => a.n > task.budget.fromAttempt && a.outcome !== 'interrupted');
    if (finished.length >= gates.attempts) {
      failGate(ctx, id, new GateError('attempts', 'task', `attempts gate: ${finished.length} of ${gates.attempts} attempts failed`));
      return;
    }
    const tripped = checkTaskGates(task, gates, task.elapsedMs);
    if (tripped !== null) {
      failGate(ctx, id, tripped);
      return;
    }
    try {
      ctx.checkFleet();
    } catch {
      return; // stays queued: a later run picks it up
    }

    const n = task.budget.fromAttempt + finished.length + 1;
    const started = ctx.clock.now();
    const elapsedBefore = task.elapsedMs;
    const controller = new AbortController();
    const onFleetAbort = () => controller.abort(ctx.fleetSignal.reason);
    ctx.fleetSignal.addEventListener('abort', onFleetAbort, { once: true });
    let timer: NodeJS.Timeout | null = null;
    if (gates.timeMs !== null) {
      const left = gates.timeMs - (elapsedBefore - task.budget.elapsedMs);
      timer = setTimeout(() => {
        controller.abort(new GateError('time', 'task', `time gate: ran ${Math.round(gates.timeMs! / 1000)}s, limit ${Math.round(gates.timeMs! / 1000)}s`));
      }, Math.min(Math.max(0, left), 2 ** 31 - 1));
      timer.unref();
    }
    const verifyOnly = task.verifyOnly;
    const previousPlan = task.attempts.findLast((a) => a.plan !== null)?.plan ?? null;
    const port = ctx.ports.acquire(id);
    ctx.setStatus(id, 'running', (t) => {
      t.attempt = n;
      t.branch = branch;
      t.reason = null;
      t.gate = null;
      t.phase = 'setup';
      t.verifyOnly = false;
      t.startedAt ??= new Date(started).toISOString();
      // An attempt interrupted by a crash or a quit is replaced by this one, its spending kept in the totals.
      const interrupted = t.attempts.findIndex((a) => a.n === n && a.outcome === 'interrupted');
      if (interrupted !== -1) t.attempts[interrupted]!.n = -n;
      t.attempts.push(newAttempt(n, new Date(started).toISOString()));
    });
    ctx.transcript(id, n, { type: 'attempt-start', attempt: n, base: ctx.base, branch });
    const tick = () => {
      ctx.state.update(id, (t) => {
        t.elapsedMs = elapsedBefore + (ctx.clock.now() - started);
      });
    };
    /**
     * The task's gates (its clock brought up to date), then the fleet's: the gate that has tripped, if any.
     * The task's own comes first, so a task over its own limit fails now rather than waiting for a next run.
     */
    const trippedGate = (): unknown => {
      tick();
      const now = ctx.state.get(id)!;
      const own = checkTaskGates(now, gates, now.elapsedMs);
      if (own !== null) return own;
      try {
        ctx.checkFleet();
        return null;
      } catch (fleetStop) {
        return fleetStop;
      }
    };

    let result: Awaited<ReturnType<Pipeline['run']>> | null = null;
    let error: unknown = null;
    try {
      result = await ctx.pipeline.run({
        spec,
        config,
        base: ctx.base,
        repoRoot: ctx.repoRoot,
        worktree,
        branch,
        attempt: n,
        verifyOnly,
        previousPlan,
        env: taskEnv(ctx.parentEnv, { taskId: id, worktree, branch, base: ctx.base, gitRoot: ctx.repoRoot, port }),
        evidence,
        signal: controller.signal,
        onPhase: (phase) => {
          tick();
          ctx.setStatus(id, 'running', (t) => (t.phase = phase));
          ctx.transcript(id, n, { type: 'phase', phase });
        },
        // During a call a tripped gate aborts it; before a call it refuses to start one.
        onAgentEvent: (role, model, event) => onAgentEvent(ctx, id, n, role, model, event, () => {
          const over = trippedGate();
          if (over !== null) controller.abort(over);
        }),
        onOutput: (phase, chunk) => {
          ctx.events.emit('phase-output', { id, phase, chunk });
          ctx.transcript(id, n, { type: 'output', phase, chunk });
        },
        beforeCall: () => {
          if (controller.signal.aborted) throw controller.signal.reason;
          const over = trippedGate();
          if (over !== null) throw over;
        },
        onNotice: (message, level) => ctx.events.emit('log', { level, id, message }),
        remainingMs: () =>
          gates.timeMs === null ? Number.MAX_SAFE_INTEGER : Math.max(1, gates.timeMs - (elapsedBefore - task.budget.elapsedMs) - (ctx.clock.now() - started)),
      });
    } catch (caught) {
      error = controller.signal.aborted && controller.signal.reason !== undefined ? controller.signal.reason : caught;
    } finally {
      if (timer !== null) clearTimeout(timer);
      ctx.fleetSignal.removeEventListener('abort', onFleetAbort);
      ctx.ports.release(id);
      tick();
    }

    const endedAt = new Date(ctx.clock.now()).toISOString();
    if (error !== null) {
      if (error instanceof GateError && error.scope === 'task') {
        finishAttempt(ctx, id, n, { outcome: 'gate', reason: error.message, endedAt });
        failGate(ctx, id, error);
        return;
      }
      if (error instanceof GateError || error instanceof StopError || ctx.fleetSignal.aborted) {
        // The fleet is stopping: nothing half-done stands; the attempt restarts on the next run.
        const reason = error instanceof Error ? error.message : String(error);
        finishAttempt(ctx, id, n, { outcome: 'interrupted', reason, endedAt });
        ctx.setStatus(id, 'queued', (t) => {
          t.phase = null;
          t.reason = `interrupted: ${reason}`;
        });
        return;
      }
      const message = error instanceof Error ? error.message : String(error);
      finishAttempt(ctx, id, n, { outcome: 'error', reason: message, endedAt, evidence: `Outcome: the attempt stopped with an error\n\n${message}` });
      ctx.events.emit('log', { level: 'warn', id, message: `attempt ${n} failed: ${message}` });
      if (repeated(ctx, id, `error:${message}`, gates.attempts)) return;
      evidence = `Outcome: the attempt stopped with an error\n\n${message}`;
      continue;
    }

    const r = result!;
    finishAttempt(ctx, id, n, {
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
    });
    if (r.outcome === 'verified') {
      ctx.setStatus(id, 'verified', (t) => {
        t.phase = null;
        t.reason = null;
      });
      return;
    }
    ctx.events.emit('log', { level: 'info', id, message: `attempt ${n}: ${r.reason ?? r.outcome}` });
    if (repeated(ctx, id, failureFingerprint(r.outcome, r.evidence ?? ''), gates.attempts)) return;
    evidence = r.evidence;
  }
}

function onAgentEvent(
  ctx: TaskRunContext,
  id: string,
  n: number,
  role: Role,
  model: string,
  event: AgentEvent,
  afterUsage: () => void,
): void {
  switch (event.type) {
    case 'text':
      ctx.events.emit('agent-text', { id, role, attempt: n, text: event.text });
      ctx.transcript(id, n, { type: 'text', role, text: event.text });
      return;
    case 'tool':
      ctx.events.emit('tool-call', { id, role, attempt: n, name: event.name, input: event.input });
      ctx.transcript(id, n, { type: 'tool', role, name: event.name, input: event.input });
      return;
    case 'tool-result':
      ctx.transcript(id, n, { type: 'tool-result', role, name: event.name, output: event.output, isError: event.isError });
      return;
    case 'usage':
      ctx.account(id, role, model, event);
      ctx.transcript(id, n, { type: 'usage', role, model, usage: event.usage });
      afterUsage();
      return;
  }
}

function finishAttempt(ctx: TaskRunContext, id: string, n: number, patch: Partial<Omit<AttemptRecord, 'n'>>): void {
  ctx.state.update(
    id,
    (t) => {
      const attempt = t.attempts.find((a) => a.n === n);
      if (attempt !== undefined) Object.assign(attempt, patch);
    },
    true,
  );
  ctx.transcript(id, n, { type: 'attempt-end', outcome: patch.outcome, reason: patch.reason ?? null });
}

function failGate(ctx: TaskRunContext, id: string, gate: GateError): void {
  ctx.events.emit('gate', { scope: 'task', id, gate: gate.gate, reason: gate.message });
  ctx.setStatus(id, 'failed', (t) => {
    t.phase = null;
    t.reason = gate.message;
    t.gate = gate.gate;
  });
}

/**
 * The no-progress gate: the same failure twice in a row fails the task. It exists to save the attempts
 * that are left, so when none are left the attempts gate is the one that speaks.
 */
function repeated(ctx: TaskRunContext, id: string, fingerprint: string, maxAttempts: number): boolean {
  const task = ctx.state.get(id)!;
  const done = task.attempts.filter((a) => a.n > task.budget.fromAttempt && a.outcome !== 'interrupted' && a.outcome !== 'running');
  const last = done.at(-1);
  const previous = done.at(-2);
  setFingerprint(ctx, id, last?.n, fingerprint);
  if (last === undefined || previous === undefined || done.length >= maxAttempts) return false;
  if (previous.fingerprint !== null && previous.fingerprint === fingerprint) {
    failGate(ctx, id, new GateError('no-progress', 'task', `no progress: attempts ${previous.n} and ${last.n} failed the same way (${last.reason ?? last.outcome})`));
    return true;
  }
  return false;
}

function setFingerprint(ctx: TaskRunContext, id: string, n: number | undefined, fingerprint: string): void {
  if (n === undefined) return;
  ctx.state.update(id, (t) => {
    const a = t.attempts.find((x) => x.n === n);
    if (a !== undefined) a.fingerprint = fingerprint;
  });
}

function lastEvidence(attempts: AttemptRecord[]): string | null {
  for (let i = attempts.length - 1; i >= 0; i--) {
    const a = attempts[i]!;
    if (a.outcome !== 'interrupted' && a.outcome !== 'running') return a.evidence;
  }
  return null;
}

