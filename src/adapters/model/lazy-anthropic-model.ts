/**
 * {@link AnthropicModelClient} loaded on its first call. The SDK is some three hundred modules: `merge`,
 * `discard`, `status`, `serve` before any attempt, and every command that never calls the Messages API start
 * without reading them. The options are the client's own, so the first call behaves exactly as an eagerly
 * built client would, and every later call goes to the same client.
 */
import type { AgentEvent, AgentRequest, AgentResult, ModelClient } from '../../ports/model.js';
import type { AnthropicModelClient, AnthropicModelClientOptions } from './anthropic-model.js';

export class LazyAnthropicModelClient implements ModelClient {
  readonly #options: AnthropicModelClientOptions;
  /** set on the first call and never replaced: one client for the process's whole run */
  #client: Promise<AnthropicModelClient> | undefined;

  constructor(options: AnthropicModelClientOptions) {
    this.#options = options;
  }

  async runAgent(request: AgentRequest, onEvent: (event: AgentEvent) => void): Promise<AgentResult> {
    this.#client ??= import('./anthropic-model.js').then((m) => new m.AnthropicModelClient(this.#options));
    return (await this.#client).runAgent(request, onEvent);
  }
}
