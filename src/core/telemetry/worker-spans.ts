import type { Phase } from '../../domain/types.js';
import type { AttemptJob, WorkerEvent } from '../../ports/attempt-queue.js';
import type { Span, Telemetry } from '../../ports/telemetry.js';
import { allowListed, type AllowedAttributes } from './attributes.js';

/**
 * A worker's side of an attempt's trace: the phase spans (`phase setup|explore|implement|verify`) of the job
 * it runs, as children of the coordinator's `attempt <n>` span, whose W3C context the job carries
 * (`AttemptJob.traceparent`). Without one the phases are recorded as a trace of their own.
 *
 * Use: make one per job, pass every `WorkerEvent` the handler emits to `observe` (in emit order), and call
 * `end` once the handler settled, also when it threw or was aborted:
 *
 *     const spans = workerAttemptSpans(telemetry, job, identity.id);
 *     const emit = (event: WorkerEvent) => { spans.observe(event); return channel.emit(event); };
 *     try { await runAttempt(job, emit, signal); } finally { spans.end(); }
 *
 * Only the phase's name, the task id, the attempt and the worker id are recorded: events' text, plans,
 * output chunks and errors' messages are never read.
 */
export interface WorkerAttemptSpans {
  observe(event: WorkerEvent): void;
  /** ends the open phase span (an attempt cut short ends it as an error); idempotent */
  end(): void;
}

export function workerAttemptSpans(
  telemetry: Telemetry,
  job: Pick<AttemptJob, 'taskId' | 'attempt' | 'traceparent'>,
  workerId: string,
): WorkerAttemptSpans {
  if (!telemetry.enabled) return { observe: () => undefined, end: () => undefined };
  const t = allowListed(telemetry);
  const parent = job.traceparent === undefined || job.traceparent === '' ? undefined : { traceparent: job.traceparent };
  let open: { phase: Phase; span: Span } | null = null;
  let settled = false;
  const close = (status: 'ok' | 'error') => {
    open?.span.setStatus(status);
    open?.span.end();
    open = null;
  };
  return {
    observe(event) {
      if (settled) return;
      if (event.kind === 'phase') {
        if (open?.phase === event.phase) return;
        close('ok');
        const attributes = {
          'loopfleet.task.id': job.taskId,
          'loopfleet.attempt': job.attempt,
          'loopfleet.phase': event.phase,
          'loopfleet.worker.id': workerId,
        } satisfies AllowedAttributes;
        open = {
          phase: event.phase,
          span: t.startSpan(`phase ${event.phase}`, { attributes, ...(parent === undefined ? {} : { parent }) }),
        };
      } else if (event.kind === 'result') {
        const outcome = event.result.outcome;
        open?.span.setAttributes({ 'loopfleet.attempt.outcome': outcome } satisfies AllowedAttributes);
        close(outcome === 'verified' || outcome === 'unchanged' ? 'ok' : 'error');
        settled = true;
      } else if (event.kind === 'failed') {
        close('error');
        settled = true;
      }
    },
    end() {
      settled = true;
      close('error');
    },
  };
}
