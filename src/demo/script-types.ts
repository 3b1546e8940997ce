import type { Role } from '../domain/types.js';

/** A request body as the fake Messages API receives it (validated, otherwise untyped). */
export type RequestBody = Record<string, unknown> & {
  model: string;
  max_tokens: number;
  messages: ApiMessage[];
};

export interface ApiMessage {
  role: 'user' | 'assistant';
  content: string | ApiBlock[];
}

export type ApiBlock = Record<string, unknown> & { type: string };

export interface ToolResultSeen {
  toolUseId: string;
  /** name of the tool the result answers (from the matching tool_use), '' when unknown */
  name: string;
  /** the result's text content */
  content: string;
  isError: boolean;
}

/** What a script sees of one request. */
export interface ScriptRequest {
  body: RequestBody;
  model: string;
  /** the system prompt as one text */
  system: string;
  /** the text of the first user message: the task prompt, where the task and attempt markers live */
  prompt: string;
  /** the text blocks of the last user message */
  lastUserText: string;
  /** assistant messages in the history so far (0 on the first request of a conversation) */
  assistantTurns: number;
  /** the tool results in the last user message, in order */
  toolResults: ToolResultSeen[];
  /** names of the tools the request offers */
  tools: string[];
  /** the JSON schema of `output_config.format`, when structured output is asked for */
  outputSchema: Record<string, unknown> | null;
  /** from the markers (see {@link roleOf} and {@link taskOf}) */
  role: Role | null;
  taskId: string | null;
  attempt: number;
  /** 1-based count of requests this server has received, across all conversations */
  index: number;
  /** how many times this exact body was received before (a retry or a replay sees 1, 2, ...) */
  repeat: number;
  /** the text of `role: "system"` messages inside the conversation (per-turn-control beta) */
  systemMessages: string;
}

export interface ToolUseScript {
  name: string;
  input: Record<string, unknown>;
}

export type Fault =
  /** an HTTP error before any streaming (the SDK retries 408, 409, 429 and 5xx); `body` replaces the API error JSON */
  | { type?: 'http'; status: number; retryAfterMs?: number; body?: unknown }
  /** the socket is destroyed before a response is written */
  | { type: 'reset' }
  /** the stream stops after `afterEvents` events: cleanly ('end', the default) or by destroying the socket */
  | { type: 'cut'; afterEvents: number; mode?: 'end' | 'destroy' }
  /** an `event: error` (overloaded_error) inside a 200 stream after `afterEvents` events */
  | { type: 'error-event'; afterEvents: number; message?: string };

/** One scripted reply. */
export interface ScriptTurn {
  /** a thinking block before the text, signed by the server (a client must send it back unchanged) */
  thinking?: string;
  text?: string;
  toolUses?: ToolUseScript[];
  /** default: 'tool_use' when there are tool uses, 'end_turn' otherwise */
  stopReason?: 'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence' | 'refusal';
  /** wait before the response headers */
  delayMs?: number;
  /** wait between stream events */
  chunkDelayMs?: number;
  fault?: Fault;
}

export type Script = (req: ScriptRequest) => ScriptTurn | Promise<ScriptTurn>;
