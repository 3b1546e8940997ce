import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WORK_DIR } from '../../src/domain/layout.js';
import { UsageError } from '../../src/domain/errors.js';
import type { Role, Usage } from '../../src/domain/types.js';
import { backlogRepo, openFleet, runFleet } from '../helpers/fleet-harness.js';
import type { ReceivedSpan } from '../helpers/otlp-receiver.js';
import { otelTestEnv } from '../helpers/otel-env.js';

const otel = otelTestEnv();
const { cleanups, collector } = otel;
const receiver = () => otel.receiver({ endpoint: true });

/** Strings planted in everything a trace must never carry: the task's text, the plan, agent text, code, a diffed path, check output, a credential. */
const MARK = {
  title: 'TITLE-7c1e',
  description: 'DESCRIPTION-5b9d',
  plan: 'PLAN-3f0a',
  agentText: 'AGENT-TEXT-91d2',
  code: 'CODE-44ab',
  path: 'PATH-e8c3',
  checkOutput: 'CHECK-OUTPUT-0d7f',
  header: 'HEADER-SECRET-6a2c',
  apiKey: 'test-key',
};

const USAGE: Record<Role, Usage> = {
  explorer: { input: 1000, output: 50, cacheWrite: 7, cacheRead: 300 },
  implementer: { input: 2000, output: 400, cacheWrite: 0, cacheRead: 900 },
  verifier: { input: 10, output: 1, cacheWrite: 0, cacheRead: 0 },
};

const CHECK = `if [ -f good.txt ]; then exit 0; fi; echo '${MARK.checkOutput} nothing good yet'; exit 1`;

/** T-1 fails its check once (its implementer writes a marked file), then passes; T-2 passes at once. */
const script = ({ role, task, attempt }: { role: Role; task: string; attempt: number }) => {
  if (role === 'explorer') return { text: `${MARK.plan}: write good.txt`, usage: USAGE.explorer };
  if (role === 'implementer') {
    const edits =
      task === 'T-1' && attempt === 1
        ? { [`${MARK.path}.txt`]: `${MARK.code}\n` }
        : { 'good.txt': `${MARK.code} ${task}\n` };
    return { text: MARK.agentText, edits, usage: USAGE.implementer, chunks: 3 };
  }
  return { usage: USAGE.verifier };
};

function childrenOf(spans: ReceivedSpan[], parent: ReceivedSpan): ReceivedSpan[] {
  return spans.filter((s) => s.parentSpanId === parent.spanId && s.traceId === parent.traceId);
}

describe('a fleet run observed through OpenTelemetry', () => {
  it("exports a trace per task with its attempts and phases, the right token and cost sums, and none of the task's text", {
    timeout: 120_000,
  }, async () => {
    const r = await receiver();
    process.env.OTEL_EXPORTER_OTLP_HEADERS = `authorization=Bearer ${MARK.header}`;
    const root = await backlogRepo(
      cleanups,
      'check: sh check.sh\nreview: false\ngates:\n  attempts: 3',
      `- [ ] T-1 ${MARK.title} one\n  ${MARK.description} in detail\n- [ ] T-2 Two`,
      { 'check.sh': `${CHECK}\n` },
    );
    const { fleet } = await runFleet(root, script);
    expect(fleet.tasks().map((t) => [t.id, t.status, t.attempt])).toEqual([
      ['T-1', 'verified', 2],
      ['T-2', 'verified', 1],
    ]);

    const spans = r.spans();
    const roots = spans.filter((s) => s.parentSpanId === null);
    expect(roots.map((s) => s.name).sort()).toEqual(['task T-1', 'task T-2']);
    expect(new Set(roots.map((s) => s.traceId)).size).toBe(2);
    // every span belongs to one of the two traces, and its parent is in the export
    const ids = new Set(spans.map((s) => s.spanId));
    for (const s of spans) {
      expect(roots.map((t) => t.traceId)).toContain(s.traceId);
      if (s.parentSpanId !== null) expect(ids.has(s.parentSpanId), `parent of ${s.name}`).toBe(true);
    }

    const t1 = roots.find((s) => s.name === 'task T-1')!;
    expect(t1.attributes).toMatchObject({
      'loopfleet.task.id': 'T-1',
      'loopfleet.task.status': 'verified',
      'loopfleet.attempt': 2,
    });
    const attempts = childrenOf(spans, t1).sort((a, b) => a.name.localeCompare(b.name));
    expect(attempts.map((a) => [a.name, a.attributes['loopfleet.attempt.outcome'], a.status])).toEqual([
      ['attempt 1', 'check-failed', 2],
      ['attempt 2', 'verified', 1],
    ]);
    for (const a of attempts) {
      expect(
        childrenOf(spans, a)
          .sort((x, y) => Number(x.startNs - y.startNs))
          .map((p) => p.name),
      ).toEqual(['phase setup', 'phase explore', 'phase implement', 'phase verify']);
      expect(childrenOf(spans, a).every((p) => p.startNs >= a.startNs && p.endNs <= a.endNs)).toBe(true);
    }
    const state = fleet.task('T-1')!;
    for (const [i, a] of attempts.entries()) {
      const record = state.attempts[i]!;
      const used = Object.values(record.usageByRole).reduce(
        (n, u) => n + u.input + u.output + u.cacheWrite + u.cacheRead,
        0,
      );
      expect(a.attributes['loopfleet.tokens']).toBe(used);
      expect(a.attributes['loopfleet.tokens.input']).toBe(USAGE.explorer.input + USAGE.implementer.input);
      expect(a.attributes['loopfleet.cost_usd']).toBeCloseTo(record.costUsd, 12);
    }
    const t2 = roots.find((s) => s.name === 'task T-2')!;
    expect(childrenOf(spans, t2).map((a) => a.name)).toEqual(['attempt 1']);
    expect(spans.every((s) => s.resource['service.name'] === 'loopfleet')).toBe(true);

    // tokens by kind, summed over roles and models, equal the fleet's own totals; so does the cost
    const totals = fleet.summary().totals;
    const tokens = [...r.latest('loopfleet.tokens').values()];
    const byKind = (kind: string) =>
      tokens.filter((p) => p.attributes['loopfleet.token.kind'] === kind).reduce((n, p) => n + p.value, 0);
    expect({
      input: byKind('input'),
      output: byKind('output'),
      cacheWrite: byKind('cache_write'),
      cacheRead: byKind('cache_read'),
    }).toEqual(totals.usage);
    expect(totals.usage.input).toBe(3 * (USAGE.explorer.input + USAGE.implementer.input));
    const byRole = tokens.filter(
      (p) => p.attributes['loopfleet.role'] === 'implementer' && p.attributes['loopfleet.token.kind'] === 'output',
    );
    expect(byRole.map((p) => [p.value, p.attributes['loopfleet.model']])).toEqual([
      [3 * USAGE.implementer.output, 'claude-sonnet-5-5'],
    ]);
    const cost = [...r.latest('loopfleet.cost').values()].reduce((n, p) => n + p.value, 0);
    expect(cost).toBeGreaterThan(0);
    expect(cost).toBeCloseTo(totals.costUsd, 12);

    const outcomes = Object.fromEntries(
      [...r.latest('loopfleet.attempts').values()].map((p) => [p.attributes['loopfleet.attempt.outcome'], p.value]),
    );
    expect(outcomes).toEqual({ 'check-failed': 1, verified: 2 });
    expect([...r.latest('loopfleet.attempt.duration').values()].reduce((n, p) => n + (p.count ?? 0), 0)).toBe(3);
    const tasks = Object.fromEntries(
      [...r.latest('loopfleet.tasks').values()].map((p) => [p.attributes['loopfleet.task.status'], p.value]),
    );
    expect(tasks).toMatchObject({ verified: 2, queued: 0, running: 0, failed: 0 });
    expect([...r.latest('loopfleet.queue.depth').values()].map((p) => p.value)).toEqual([0]);
    expect([...r.latest('loopfleet.workers').values()].map((p) => p.value)).toEqual([1]);

    // nothing the person, the agents or the check wrote, and no credential, is in anything exported
    const everything = r.allText();
    expect(everything.length).toBeGreaterThan(1000);
    for (const [what, marker] of Object.entries(MARK))
      expect(everything.includes(marker), `${what} (${marker}) exported`).toBe(false);
    // ...while the headers did reach the collector, so the header marker's absence above means something
    expect(r.requests.every((q) => q.headers.authorization === `Bearer ${MARK.header}`)).toBe(true);
    expect(r.refused).toEqual([]);
  });

  it("a failed task's trace says which gate stopped it, and its attempts are errors", {
    timeout: 120_000,
  }, async () => {
    const r = await receiver();
    const root = await backlogRepo(
      cleanups,
      'check: sh check.sh\nreview: false\ngates:\n  attempts: 2',
      '- [ ] T-1 Never good',
      { 'check.sh': `${CHECK}\n` },
    );
    const { fleet } = await runFleet(root, ({ role }) =>
      role === 'implementer' ? { edits: { 'other.txt': 'x\n' } } : {},
    );
    expect(fleet.task('T-1')!.status).toBe('failed');
    const spans = r.spans();
    const task = spans.find((s) => s.name === 'task T-1')!;
    expect(task.status).toBe(2);
    expect(task.attributes['loopfleet.task.status']).toBe('failed');
    expect(task.attributes['loopfleet.gate']).toBe(fleet.task('T-1')!.gate);
    expect(childrenOf(spans, task).map((a) => a.status)).toEqual([2, 2]);
    expect(r.allText().includes(MARK.checkOutput)).toBe(false);
  });

  it('with no endpoint set, nothing is exported and the session has no recorder', { timeout: 60_000 }, async () => {
    const r = await otel.receiver();
    const root = await backlogRepo(cleanups, 'check: "true"\nreview: false', '- [ ] T-1 One');
    const { fleet, session } = await runFleet(root, ({ role }) =>
      role === 'implementer' ? { edits: { 'one.txt': '1\n' } } : {},
    );
    expect(fleet.task('T-1')!.status).toBe('verified');
    expect(session.telemetry.recorder).toBeNull();
    expect(r.requests).toEqual([]);
  });

  it('a bad endpoint is bad input: the start is refused naming the variable, and nothing is written', {
    timeout: 60_000,
  }, async () => {
    const root = await backlogRepo(cleanups, 'check: "true"\nreview: false', '- [ ] T-1 One');
    process.env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT = 'collector.internal:4318/v1/metrics';
    const refused = openFleet(root, () => ({}));
    await expect(refused).rejects.toBeInstanceOf(UsageError);
    await expect(refused).rejects.toThrow(/OTEL_EXPORTER_OTLP_METRICS_ENDPOINT/);
    expect(existsSync(join(root, WORK_DIR))).toBe(false);
  });

  it('a collector that refuses the export: the run ends as usual and the log says the telemetry was not exported', {
    timeout: 60_000,
  }, async () => {
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = await collector((_req, res) =>
      res.writeHead(400, { 'content-type': 'application/json' }).end('{}'),
    );
    const root = await backlogRepo(cleanups, 'check: "true"\nreview: false', '- [ ] T-1 One');
    const h = await openFleet(root, ({ role }) => (role === 'implementer' ? { edits: { 'one.txt': '1\n' } } : {}));
    const warnings: string[] = [];
    h.fleet.events.on('log', (l) => {
      if (l.level === 'warn') warnings.push(l.message);
    });
    h.fleet.start();
    await h.fleet.whenIdle();
    await h.session.close();
    expect(h.fleet.task('T-1')!.status).toBe('verified');
    expect(
      warnings.filter((w) =>
        w.startsWith('OpenTelemetry: the last traces and metrics could not be exported: OTLP export failed'),
      ),
    ).toHaveLength(1);
  });
});
