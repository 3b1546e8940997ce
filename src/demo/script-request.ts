import { attemptOf, roleOf, taskOf } from '../core/roles/marker.js';
import type { ApiBlock, ApiMessage, RequestBody, ScriptRequest, ToolResultSeen } from './script-types.js';

/** How the fake server presents a validated request to a script. */

function textOfContent(content: ApiMessage['content'] | unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return (content as ApiBlock[])
    .filter((b) => b.type === 'text')
    .map((b) => String(b.text ?? ''))
    .join('\n');
}

function systemText(system: unknown): string {
  if (typeof system === 'string') return system;
  return textOfContent(system);
}

function toolResultsOf(messages: ApiMessage[]): ToolResultSeen[] {
  const last = messages.at(-1);
  if (last === undefined || last.role !== 'user' || typeof last.content === 'string') return [];
  const names = new Map<string, string>();
  for (const m of messages) {
    if (m.role !== 'assistant' || typeof m.content === 'string') continue;
    for (const b of m.content) if (b.type === 'tool_use') names.set(String(b.id), String(b.name));
  }
  return last.content
    .filter((b) => b.type === 'tool_result')
    .map((b) => {
      const id = String(b.tool_use_id);
      return {
        toolUseId: id,
        name: names.get(id) ?? '',
        content: textOfContent(b.content),
        isError: b.is_error === true,
      };
    });
}

function outputSchemaOf(body: RequestBody): Record<string, unknown> | null {
  const config = body.output_config as { format?: { schema?: Record<string, unknown> } | null } | undefined;
  return config?.format?.schema ?? null;
}

export function toScriptRequest(body: RequestBody, index: number, repeat: number): ScriptRequest {
  // Per-turn system messages (per-turn-control beta) are instructions, not turns.
  const messages = body.messages.filter((m) => (m.role as string) !== 'system');
  const systemMessages = body.messages
    .filter((m) => (m.role as string) === 'system')
    .map((m) => textOfContent(m.content))
    .join('\n');
  const system = systemText(body.system);
  const firstUser = messages.find((m) => m.role === 'user');
  const lastUser = [...messages].reverse().find((m) => m.role === 'user');
  const prompt = textOfContent(firstUser?.content);
  const tools = ((body.tools as Array<{ name?: unknown }> | undefined) ?? [])
    .map((t) => (typeof t.name === 'string' ? t.name : ''))
    .filter((n) => n !== '');
  return {
    body,
    model: body.model,
    system,
    prompt,
    lastUserText: textOfContent(lastUser?.content),
    assistantTurns: messages.filter((m) => m.role === 'assistant').length,
    toolResults: toolResultsOf(messages),
    tools,
    outputSchema: outputSchemaOf(body),
    role: roleOf(system),
    taskId: taskOf(prompt),
    attempt: attemptOf(prompt),
    index,
    repeat,
    systemMessages,
  };
}
