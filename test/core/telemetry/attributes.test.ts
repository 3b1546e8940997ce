import { describe, expect, it } from 'vitest';
import { allowed, allowListed, ATTRIBUTE_RULES, meetsRule, type Rule } from '../../../src/core/telemetry/attributes.js';
import { noopTelemetry } from '../../../src/ports/telemetry.js';
import { HOSTILE } from '../../helpers/hostile-text.js';
import { FakeTelemetry } from '../../helpers/fake-telemetry.js';

/** For each kind of rule: values it must take, and values it must refuse. */
const GOOD: Record<string, Array<string | number | boolean>> = {
  'loopfleet.task.id': ['T-1', 'OPS-42', 'A1-7'],
  'loopfleet.task.status': ['queued', 'awaiting-approval', 'conflict'],
  'loopfleet.attempt': [0, 1, 12],
  'loopfleet.attempt.outcome': ['verified', 'check-failed', 'unchanged'],
  'loopfleet.attempt.verify_only': [true, false],
  'loopfleet.phase': ['setup', 'explore', 'implement', 'verify'],
  'loopfleet.role': ['explorer', 'implementer', 'verifier'],
  'loopfleet.model': ['claude-sonnet-5-5', 'openai/gpt-6', 'qwen3:32b', 'gemini-3.0-pro@2026'],
  'loopfleet.gate': ['no-progress', 'fleet_cost'],
  'loopfleet.token.kind': ['input', 'cache_read'],
  'loopfleet.tokens': [0, 1_500_000],
  'loopfleet.tokens.input': [3],
  'loopfleet.tokens.output': [3],
  'loopfleet.tokens.cache_write': [3],
  'loopfleet.tokens.cache_read': [3],
  'loopfleet.cost_usd': [0, 0.0004, 12.5],
  'loopfleet.worker.id': ['build-box-2-4411-9f2c', 'ip-10-0-0-1.ec2.internal-77-a1'],
};

const BAD_STRINGS = [
  '',
  'two words',
  'line\nbreak',
  'T-1; rm -rf /',
  '\u001b]8;;http://x\u0007',
  'src/secret/path.ts has changed',
  'sk-ant-api03-xxxxxxxxxxxxxxxxxxxx with text',
  'x'.repeat(201),
  HOSTILE,
  `T-1${HOSTILE}`,
];
const BAD_NUMBERS = [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 60];

describe('the telemetry allow-list', () => {
  it('lists every key it allows, each with a rule, and tests each rule with values it takes', () => {
    expect(Object.keys(GOOD).sort()).toEqual(Object.keys(ATTRIBUTE_RULES).sort());
    for (const [key, values] of Object.entries(GOOD)) {
      for (const v of values) expect(allowed({ [key]: v }), `${key}=${String(v)}`).toEqual({ [key]: v });
    }
  });

  it('refuses free text, paths, escapes, credentials and out-of-range numbers for every key', () => {
    for (const [key, rule] of Object.entries(ATTRIBUTE_RULES) as Array<[string, Rule]>) {
      for (const v of [...BAD_STRINGS, ...BAD_NUMBERS, true]) {
        if (rule.kind === 'flag' && typeof v === 'boolean') continue;
        if (rule.kind === 'amount' && (v === 1.5 || v === 2 ** 60)) continue; // an amount may be fractional and large
        expect(meetsRule(rule, v), `${key} took ${JSON.stringify(v)}`).toBe(false);
      }
    }
    // the names' alphabets: a model name never holds a space, and a task id is LETTERS-<n> only
    expect(allowed({ 'loopfleet.model': 'claude sonnet' })).toEqual({});
    expect(allowed({ 'loopfleet.task.id': 't-1' })).toEqual({});
  });

  it('drops every key not on the list, whatever its value', () => {
    expect(
      allowed({
        'loopfleet.task.title': 'Upgrade lodash',
        prompt: 'x',
        'gen_ai.prompt': 'y',
        'loopfleet.reason': 'check failed',
        'loopfleet.attempt': 2,
      }),
    ).toEqual({ 'loopfleet.attempt': 2 });
    expect(allowed(undefined)).toEqual({});
  });

  it('stands between the recorder and the port: spans, their names, counters, histograms and gauges', async () => {
    const inner = new FakeTelemetry();
    const t = allowListed(inner);
    const task = t.startSpan('task T-1', { attributes: { 'loopfleet.task.id': 'T-1', title: 'Secret plan' } });
    const child = t.startSpan('phase explore', { parent: task });
    child.setAttributes({ 'loopfleet.phase': 'explore', output: 'check said: password=hunter2' });
    child.end();
    t.startSpan('task T-1 Upgrade lodash: see src/app.ts').end();
    t.counter('c', { description: '', unit: '1' }).add(1, { 'loopfleet.role': 'implementer', diff: '+secret' });
    t.histogram('h', { description: '', unit: 's' }).record(2, { 'loopfleet.attempt.outcome': 'vetoed because …' });
    t.observableGauge('g', { description: '', unit: '1' }, () => [
      { value: 1, attributes: { 'loopfleet.task.status': 'queued', path: '/etc' } },
    ]);

    expect(inner.spans.map((s) => [s.name, s.attributes, s.parent])).toEqual([
      ['task T-1', { 'loopfleet.task.id': 'T-1' }, null],
      ['phase explore', { 'loopfleet.phase': 'explore' }, 1],
      ['loopfleet', {}, null],
    ]);
    expect(inner.counters.get('c')).toEqual([{ value: 1, attributes: { 'loopfleet.role': 'implementer' } }]);
    expect(inner.histograms.get('h')).toEqual([{ value: 2, attributes: {} }]);
    expect(await inner.collect('g')).toEqual([{ value: 1, attributes: { 'loopfleet.task.status': 'queued' } }]);
    expect(task.traceparent()).toBe(`00-${'1'.repeat(32)}-0000000000000001-01`);
  });

  it('leaves the no-op as it is', () => {
    expect(allowListed(noopTelemetry)).toBe(noopTelemetry);
  });
});
