import { describe, expect, it } from 'vitest';
import { evalChart, xmlText } from '../../../src/core/report/eval-chart.js';
import { configResult, evalMarkdown, median, type EvalTaskOutcome } from '../../../src/core/report/eval-result.js';

const outcome = (commit: string, status: EvalTaskOutcome['status'], more: Partial<EvalTaskOutcome> = {}) => ({
  commit,
  status,
  costUsd: 0,
  seconds: 0,
  attempts: status === 'skipped' ? 0 : 1,
  vetoes: 0,
  guardRefusals: 0,
  diffLines: null,
  humanLines: 4,
  reason: null,
  ...more,
});

describe('configResult', () => {
  const outcomes = [
    outcome('a', 'verified', { costUsd: 0.3, seconds: 10, diffLines: 6 }),
    outcome('b', 'failed', { costUsd: 0.5, seconds: 30, attempts: 2, vetoes: 1, guardRefusals: 1 }),
    outcome('c', 'verified', { costUsd: 0.2, seconds: 20, diffLines: 2, humanLines: 3 }),
    outcome('d', 'skipped'),
  ];

  it('counts a skipped task as not verified, and divides everything spent by the verified tasks', () => {
    const r = configResult('baseline', outcomes);
    expect(r).toMatchObject({
      name: 'baseline',
      tasks: 4,
      verified: 2,
      verifiedShare: 0.5,
      attempts: 4,
      vetoes: 1,
      guardRefusals: 1,
      diffLines: 8,
      humanLines: 7,
      perTask: { a: 'verified', b: 'failed', c: 'verified', d: 'skipped' },
    });
    expect(r.costUsd).toBeCloseTo(1, 10);
    expect(r.costPerVerified).toBeCloseTo(0.5, 10);
    // The median is over the tasks that ran: 10, 20, 30.
    expect(r.medianSeconds).toBe(20);
    expect(r.ci95[0]).toBeCloseTo(0.15, 2);
    expect(r.ci95[1]).toBeCloseTo(0.85, 2);
  });

  it('has no cost per verified task and no median when nothing verified or ran', () => {
    const r = configResult('none', [outcome('d', 'skipped')]);
    expect(r).toMatchObject({ verified: 0, verifiedShare: 0, costPerVerified: null, medianSeconds: null });
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });
});

describe('evalMarkdown and evalChart', () => {
  const hostile = '<script>alert("x")</script> & \'q\'';
  const configs = [
    configResult('cheap', [outcome('a1b2c3d4e5f6a7', 'verified', { costUsd: 0.1 }), outcome('f0', 'failed')]),
    configResult(hostile, [outcome('a1b2c3d4e5f6a7', 'failed', { costUsd: 0.4 }), outcome('f0', 'failed')]),
  ];

  it('writes the figures and which configuration solved each task', () => {
    const md = evalMarkdown(
      {
        tasks: [{ commit: 'a1b2c3d4e5f6a7', title: 'Fix | pipes\nand lines', failToPass: ['x'], passToPass: 1 }],
        configs,
      },
      'eval',
    );
    expect(md).toContain('| cheap | 1 of 2 | 50 % (9 %–91 %) | $0.1000 | $0.1000 |');
    expect(md).toContain('| a1b2c3d4e5f6 | Fix \\| pipes and lines | verified | failed |');
    expect(md).toContain('![verified share and cost per verified task](chart.svg)');
  });

  it('draws a bar and an interval per configuration, with every text escaped', () => {
    const svg = evalChart(
      configs.map((c) => ({ name: c.name, share: c.verifiedShare, ci95: c.ci95, costPerVerified: c.costPerVerified })),
      `eval of ${hostile}`,
    );
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg).not.toContain('<script>');
    expect(svg).toContain(`>${xmlText(hostile)}</text>`);
    expect(xmlText(hostile)).toBe('&#60;script&#62;alert(&#34;x&#34;)&#60;/script&#62; &#38; &#39;q&#39;');
    // The share bar of 'cheap' is half of the 250-wide panel; the other verified nothing.
    expect(svg).toContain('<rect x="150" y="48" width="125" height="20" fill="#4e79a7"/>');
    expect(svg).toContain('<rect x="150" y="84" width="0" height="20" fill="#4e79a7"/>');
    expect(svg).toContain('>none verified</text>');
    // Every element that opens is closed: tags balance.
    const opened = (svg.match(/<(svg|text|title)\b/g) ?? []).length;
    const closed = (svg.match(/<\/(svg|text|title)>/g) ?? []).length;
    expect(opened).toBe(closed);
  });
});
