import { TASK_ID_RE } from '../backlog/scan.js';
import { PHASES, ROLES, TASK_STATUSES, type AttemptOutcome, type GateName } from '../../domain/types.js';
import type { AttributeValue, Attributes, Telemetry } from '../../ports/telemetry.js';

/**
 * The only attributes loopfleet's telemetry may carry, as data: each key with the rule its value must meet.
 * Values are ids, counts, amounts and names from closed sets (phases, outcomes, gates, roles, statuses) or
 * short names with a strict alphabet (models, worker ids). Nothing else can pass: not a prompt, an agent's
 * text, code, a diff, check output, a path of a diff, a reason (free text that quotes check output) or a
 * credential — a value with a space, a slash-separated path longer than a model name, or any other key is
 * dropped by `allowed` before it reaches the exporter.
 */
export type Rule =
  | { kind: 'one-of'; values: readonly string[] }
  | { kind: 'pattern'; pattern: RegExp; maxLength: number }
  | { kind: 'count' }
  | { kind: 'amount' }
  | { kind: 'flag' };

const OUTCOMES = [
  'running',
  'verified',
  'setup-failed',
  'check-failed',
  'guard-failed',
  'vetoed',
  'gate',
  'error',
  'interrupted',
  'unchanged',
] as const satisfies readonly AttemptOutcome[];
const GATES = [
  'attempts',
  'tokens',
  'time',
  'cost',
  'no-progress',
  'fleet_tokens',
  'fleet_cost',
  'fleet_time',
] as const satisfies readonly GateName[];
// Both lists name every member of their union: a new outcome or gate fails to compile here until it is added.
type Missing<T, L extends readonly unknown[]> = Exclude<T, L[number]>;
const _everyOutcome: Missing<AttemptOutcome, typeof OUTCOMES> extends never ? true : never = true;
const _everyGate: Missing<GateName, typeof GATES> extends never ? true : never = true;
void _everyOutcome;
void _everyGate;

export const TOKEN_KINDS = ['input', 'output', 'cache_write', 'cache_read'] as const;
export type TokenKind = (typeof TOKEN_KINDS)[number];

/** a model's name as price tables and CLIs spell them: `claude-sonnet-5-5`, `openai/gpt-6`, `qwen3:32b` */
const MODEL_NAME = /^[A-Za-z0-9][A-Za-z0-9._:/@-]*$/;
/** `<host>-<pid>-<random>` ({@link WorkerIdentity}) */
const WORKER_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;

export const ATTRIBUTE_RULES = {
  'loopfleet.task.id': { kind: 'pattern', pattern: TASK_ID_RE, maxLength: 40 },
  'loopfleet.task.status': { kind: 'one-of', values: TASK_STATUSES },
  'loopfleet.attempt': { kind: 'count' },
  'loopfleet.attempt.outcome': { kind: 'one-of', values: OUTCOMES },
  'loopfleet.attempt.verify_only': { kind: 'flag' },
  'loopfleet.phase': { kind: 'one-of', values: PHASES },
  'loopfleet.role': { kind: 'one-of', values: ROLES },
  'loopfleet.model': { kind: 'pattern', pattern: MODEL_NAME, maxLength: 100 },
  'loopfleet.gate': { kind: 'one-of', values: GATES },
  'loopfleet.token.kind': { kind: 'one-of', values: TOKEN_KINDS },
  'loopfleet.tokens': { kind: 'count' },
  'loopfleet.tokens.input': { kind: 'count' },
  'loopfleet.tokens.output': { kind: 'count' },
  'loopfleet.tokens.cache_write': { kind: 'count' },
  'loopfleet.tokens.cache_read': { kind: 'count' },
  'loopfleet.cost_usd': { kind: 'amount' },
  'loopfleet.worker.id': { kind: 'pattern', pattern: WORKER_ID, maxLength: 200 },
} as const satisfies Record<string, Rule>;

export type AttributeKey = keyof typeof ATTRIBUTE_RULES;
export type AllowedAttributes = Partial<Record<AttributeKey, AttributeValue>>;

export function meetsRule(rule: Rule, value: AttributeValue): boolean {
  switch (rule.kind) {
    case 'one-of':
      return typeof value === 'string' && rule.values.includes(value);
    case 'pattern':
      return typeof value === 'string' && value.length <= rule.maxLength && rule.pattern.test(value);
    case 'count':
      return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
    case 'amount':
      return typeof value === 'number' && Number.isFinite(value) && value >= 0;
    case 'flag':
      return typeof value === 'boolean';
  }
}

/** The attributes that are on the list and meet their rule; every other one is left out. */
export function allowed(attributes: Readonly<Record<string, AttributeValue>> | undefined): Attributes {
  const out: Record<string, AttributeValue> = {};
  for (const [key, value] of Object.entries(attributes ?? {})) {
    const rule = (ATTRIBUTE_RULES as Record<string, Rule>)[key];
    if (rule !== undefined && meetsRule(rule, value)) out[key] = value;
  }
  return out;
}

/** Span names are fixed shapes too: `task <id>`, `attempt <n>`, `phase <name>`. */
const SPAN_NAME = /^(task [A-Z][A-Z0-9]*-\d+(?:\.\d+)?|attempt \d+|phase (setup|explore|implement|verify))$/;

/**
 * `telemetry` behind the allow-list: every attribute of every span, counter, histogram and gauge goes
 * through `allowed`, and a span name that is not one of the fixed shapes is replaced by `loopfleet`. The
 * recorder and the worker spans see only this.
 */
export function allowListed(telemetry: Telemetry): Telemetry {
  if (!telemetry.enabled) return telemetry;
  const span = (s: ReturnType<Telemetry['startSpan']>) => ({
    setAttributes: (a: Attributes) => s.setAttributes(allowed(a)),
    setStatus: (status: 'ok' | 'error') => s.setStatus(status),
    end: (at?: number) => s.end(at),
    traceparent: () => s.traceparent(),
    inner: s,
  });
  type Wrapped = ReturnType<typeof span>;
  return {
    enabled: true,
    startSpan: (name, options = {}) => {
      const parent =
        options.parent === undefined
          ? undefined
          : 'inner' in options.parent
            ? (options.parent as Wrapped).inner
            : options.parent;
      return span(
        telemetry.startSpan(SPAN_NAME.test(name) ? name : 'loopfleet', {
          ...options,
          attributes: allowed(options.attributes),
          ...(parent === undefined ? {} : { parent }),
        }),
      );
    },
    counter: (name, options) => {
      const c = telemetry.counter(name, options);
      return { add: (value, attributes) => c.add(value, allowed(attributes)) };
    },
    histogram: (name, options) => {
      const h = telemetry.histogram(name, options);
      return { record: (value, attributes) => h.record(value, allowed(attributes)) };
    },
    observableGauge: (name, options, observe) =>
      telemetry.observableGauge(name, options, async () =>
        (await observe()).map((o) => ({ value: o.value, attributes: allowed(o.attributes) })),
      ),
    flush: () => telemetry.flush(),
    shutdown: () => telemetry.shutdown(),
  };
}
