import type { Role, Usage } from '../domain/types.js';

/** What the pipeline asks of one role: run it to the end in `workdir` and report. */
export interface AgentRequest {
  role: Role;
  model: string;
  /** the role's system prompt (stable across attempts: it is the cached prefix) */
  system: string;
  /** the user turn: task, plan, evidence of earlier attempts */
  prompt: string;
  workdir: string;
  /** read-only → read/glob/grep only; write → also write/edit and the shell */
  access: 'read-only' | 'write';
  /** whether the shell tool may be offered (false when no sandbox and sandbox not turned off) */
  shell: boolean;
  /** environment of the shell tool and of a command-line agent: no API keys in it */
  env: Record<string, string>;
  maxTurns: number;
  maxTokens: number;
  /** JSON schema the final answer must follow (the reviewer's verdict) */
  outputSchema?: Record<string, unknown>;
  /** aborts the call in flight; the agent's usage so far is still reported */
  signal: AbortSignal;
  /**
   * Called before each model call; throws (a GateError) to stop the agent before spending more.
   * Enforcement during a call is through `signal`.
   */
  beforeCall: () => void;
  /** an external command that plays the role instead of the API (agents/<role>.md `command:`) */
  command?: string;
  /** a known CLI agent that plays the role (agents/<role>.md `agent:`, `bin:`, `network:`) */
  agent?: AgentBackend;
  timeoutMs: number;
}

export type AgentPresetName = 'claude-code' | 'codex' | 'gemini' | 'opencode';

export interface AgentBackend {
  preset: AgentPresetName;
  /** the executable, when not the preset's default name on PATH */
  bin?: string;
  /** hosts the agent may reach besides its model endpoint (`host` or `host:port`) */
  network?: string[];
}

export type AgentEvent =
  | { type: 'text'; text: string }
  | { type: 'tool'; name: string; input: string }
  | { type: 'tool-result'; name: string; output: string; isError: boolean }
  /**
   * usage of one model response so far; deltas, summed by the receiver. `costUsd` is set when the agent
   * reported its own cost (a command-line agent); otherwise the receiver prices the tokens.
   */
  | { type: 'usage'; usage: Usage; model: string; costUsd?: number };

export interface AgentResult {
  /** the final text answer (plan, summary, or verdict JSON) */
  text: string;
  turns: number;
  stopReason: string;
  /** a CLI agent may report its own cost; the API path leaves it undefined (the loop prices tokens) */
  reportedCostUsd?: number;
}

export interface ModelClient {
  runAgent(request: AgentRequest, onEvent: (event: AgentEvent) => void): Promise<AgentResult>;
}
