import type { FleetEmitter } from '../../core/task/events.js';

/** The most characters of output kept per task and kind: about a screen of lines. */
export const TAIL_CHARS = 16_000;

class Tail {
  #text = '';
  #header = '';

  append(text: string, header: string): void {
    if (header !== this.#header) {
      this.#header = header;
      this.#text += `${this.#text === '' || this.#text.endsWith('\n') ? '' : '\n'}── ${header} ──\n`;
    }
    this.#text += text;
    if (this.#text.length > TAIL_CHARS) {
      const cut = this.#text.indexOf('\n', this.#text.length - TAIL_CHARS);
      this.#text = this.#text.slice(cut === -1 ? this.#text.length - TAIL_CHARS : cut + 1);
    }
  }

  lines(): string[] {
    return this.#text === '' ? [] : this.#text.replace(/\n$/, '').split('\n');
  }
}

/**
 * The latest agent output (text and tool calls) and setup/check output of each task, as the server saw it
 * stream since it started: what a detail view opened mid-attempt shows before the live events go on.
 * Bounded: at most {@link TAIL_CHARS} characters per task and kind, cut at a line.
 */
export class OutputTails {
  readonly #agent = new Map<string, Tail>();
  readonly #phase = new Map<string, Tail>();
  readonly #off: () => void;

  constructor(events: FleetEmitter) {
    const text = ({ id, role, attempt, text }: { id: string; role: string; attempt: number; text: string }) =>
      this.#tail(this.#agent, id).append(text, `${role} · attempt ${attempt}`);
    const tool = ({
      id,
      role,
      attempt,
      name,
      input,
    }: {
      id: string;
      role: string;
      attempt: number;
      name: string;
      input: string;
    }) =>
      this.#tail(this.#agent, id).append(
        `\n→ ${name} ${input.length > 300 ? `${input.slice(0, 300)}…` : input}\n`,
        `${role} · attempt ${attempt}`,
      );
    const phase = ({ id, phase, chunk }: { id: string; phase: string; chunk: string }) =>
      this.#tail(this.#phase, id).append(chunk, phase);
    events.on('agent-text', text);
    events.on('tool-call', tool);
    events.on('phase-output', phase);
    this.#off = () => {
      events.off('agent-text', text);
      events.off('tool-call', tool);
      events.off('phase-output', phase);
    };
  }

  of(id: string): { agent: string[]; phase: string[] } {
    return { agent: this.#agent.get(id)?.lines() ?? [], phase: this.#phase.get(id)?.lines() ?? [] };
  }

  close(): void {
    this.#off();
  }

  #tail(map: Map<string, Tail>, id: string): Tail {
    let tail = map.get(id);
    if (tail === undefined) {
      tail = new Tail();
      map.set(id, tail);
    }
    return tail;
  }
}
