import type { AgentRequest } from '../../src/ports/model.js';
import type { Role } from '../../src/domain/types.js';

/**
 * A request for a real agent CLI through its preset, as the pipeline would make it: the implementer may
 * write and use the shell, every other role is read-only. `over` sets what a test needs beyond that.
 */
export function presetRequest(
  agent: NonNullable<AgentRequest['agent']>,
  role: Role,
  task: { model: string; prompt: string; workdir: string },
  over: Partial<AgentRequest> = {},
): AgentRequest {
  const writes = role === 'implementer';
  return {
    role,
    model: task.model,
    system: `You are the ${role === 'verifier' ? 'reviewer' : role}.`,
    prompt: task.prompt,
    workdir: task.workdir,
    access: writes ? 'write' : 'read-only',
    shell: writes,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    maxTurns: 5,
    maxTokens: 1000,
    signal: new AbortController().signal,
    beforeCall: () => {},
    agent,
    timeoutMs: 50_000,
    ...over,
  };
}
