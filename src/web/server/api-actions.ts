import type { Context, Hono } from 'hono';
import { z } from 'zod';
import type { FleetHandle } from '../../core/fleet/handle.js';
import { RefusedError, UsageError } from '../../domain/errors.js';
import { json, unknownTask } from './api-read.js';
import { taskRow } from './task-json.js';

/** The actions on one task, each the same {@link FleetCommands} call as the TUI's key and the CLI's command. */
export const TASK_ACTIONS = ['merge', 'discard', 'retry', 'approve'] as const;
export type TaskAction = (typeof TASK_ACTIONS)[number];

const EMPTY = z.object({}).strict();
const APPROVE = z.object({ plan: z.string().max(200_000).optional() }).strict();
const PAUSE = z.object({ paused: z.boolean() }).strict();

export const READ_ONLY_ERROR = 'this server is read-only';

/** The body of a POST as JSON (an empty body reads as `{}`); a malformed one is bad input. */
async function body<T>(
  c: Context,
  schema: z.ZodType<T>,
): Promise<{ ok: true; value: T } | { ok: false; message: string }> {
  const text = await c.req.text();
  let raw: unknown = {};
  if (text.trim() !== '') {
    try {
      raw = JSON.parse(text);
    } catch (error) {
      return { ok: false, message: `the body is not JSON: ${(error as Error).message}` };
    }
  }
  const parsed = schema.safeParse(raw);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issue = parsed.error.issues[0]!;
  return {
    ok: false,
    message: `the body is not what this action takes: ${issue.path.join('.') || 'body'}: ${issue.message}`,
  };
}

/** A command's rejection as the API answers it: a refusal (409) or bad input (400) with the CLI's words. */
function refusal(c: Context, error: unknown): Response {
  if (error instanceof RefusedError) return json(c, { error: error.message }, 409);
  if (error instanceof UsageError) return json(c, { error: error.message }, 400);
  throw error;
}

/** `--read-only`: no action route exists; every POST is refused before anything is read. */
export function readOnlyRoutes(app: Hono): void {
  app.post('*', (c) => json(c, { error: READ_ONLY_ERROR }, 403));
}

export function actionRoutes(app: Hono, fleet: FleetHandle): void {
  app.post('/api/tasks/:id/:action', async (c) => {
    const { id, action } = c.req.param();
    if (!(TASK_ACTIONS as readonly string[]).includes(action))
      return json(c, { error: `no action '${action}': one of ${TASK_ACTIONS.join(', ')}` }, 404);
    const parsed = await body(c, action === 'approve' ? APPROVE : EMPTY);
    if (!parsed.ok) return json(c, { error: parsed.message }, 400);
    if (!fleet.tasks().some((t) => t.id === id)) return json(c, { error: unknownTask(fleet, id) }, 404);
    try {
      if (action === 'approve') fleet.approve(id, (parsed.value as z.infer<typeof APPROVE>).plan);
      else await fleet[action as Exclude<TaskAction, 'approve'>](id);
    } catch (error) {
      return refusal(c, error);
    }
    const after = fleet.tasks().find((t) => t.id === id);
    return json(c, after === undefined ? { id, status: 'gone' } : taskRow(after));
  });
  app.post('/api/merge-all', async (c) => {
    const parsed = await body(c, EMPTY);
    if (!parsed.ok) return json(c, { error: parsed.message }, 400);
    try {
      return json(c, await fleet.mergeAll());
    } catch (error) {
      return refusal(c, error);
    }
  });
  app.post('/api/pause', async (c) => {
    const parsed = await body(c, PAUSE);
    if (!parsed.ok) return json(c, { error: parsed.message }, 400);
    if (parsed.value.paused) fleet.pause();
    else fleet.resume();
    return json(c, fleet.summary());
  });
}
