/**
 * The night in one picture: spend (dollars, a filled area) and throughput
 * (tasks verified and merged, a line) over time, from `GET /api/timeline`, as inline SVG built with
 * `createElementNS`. Every label is a text node; no chart library.
 */
export const CHART_JS = String.raw`
import { el } from './dom.js';
import { duration, usd } from './format.js';

const NS = 'http://www.w3.org/2000/svg';
const W = 900;
const H = 220;
const PAD = { left: 56, right: 56, top: 16, bottom: 28 };

function svg(tag, attrs, text) {
  const node = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

function pathOf(points) {
  return points.map((p, i) => (i === 0 ? 'M' : 'L') + p[0].toFixed(1) + ' ' + p[1].toFixed(1)).join(' ');
}

/** The chart for timeline points [{t, costUsd, tokens, verified, merged, running}], t an ISO time or epoch ms. */
export function renderChart(points) {
  const box = el('figure', 'chart');
  const rows = (Array.isArray(points) ? points : [])
    .map((p) => ({ t: typeof p.t === 'number' ? p.t : Date.parse(p.t), cost: +p.costUsd || 0, done: (+p.verified || 0) + (+p.merged || 0), running: +p.running || 0 }))
    .filter((p) => Number.isFinite(p.t))
    .sort((a, b) => a.t - b.t);
  if (rows.length === 0) {
    box.append(el('p', 'empty', 'no timeline yet: the chart fills as the fleet runs'));
    return box;
  }
  const t0 = rows[0].t;
  const span = Math.max(1, rows[rows.length - 1].t - t0);
  const maxCost = Math.max(0.01, ...rows.map((r) => r.cost));
  const maxDone = Math.max(1, ...rows.map((r) => r.done));
  const x = (t) => PAD.left + ((t - t0) / span) * (W - PAD.left - PAD.right);
  const yCost = (c) => H - PAD.bottom - (c / maxCost) * (H - PAD.top - PAD.bottom);
  const yDone = (d) => H - PAD.bottom - (d / maxDone) * (H - PAD.top - PAD.bottom);
  const root = svg('svg', { viewBox: '0 0 ' + W + ' ' + H, role: 'img', class: 'chart-svg' });
  root.append(svg('title', {}, 'spend and tasks done over the run'));
  root.append(svg('line', { x1: PAD.left, y1: H - PAD.bottom, x2: W - PAD.right, y2: H - PAD.bottom, class: 'axis' }));
  const costPts = rows.map((r) => [x(r.t), yCost(r.cost)]);
  const area = pathOf(costPts) + ' L' + x(rows[rows.length - 1].t).toFixed(1) + ' ' + (H - PAD.bottom) + ' L' + PAD.left + ' ' + (H - PAD.bottom) + ' Z';
  root.append(svg('path', { d: area, class: 'cost-area' }));
  root.append(svg('path', { d: pathOf(costPts), class: 'cost-line' }));
  root.append(svg('path', { d: pathOf(rows.map((r) => [x(r.t), yDone(r.done)])), class: 'done-line' }));
  root.append(svg('text', { x: PAD.left - 6, y: PAD.top + 10, class: 'label cost', 'text-anchor': 'end' }, usd(maxCost)));
  root.append(svg('text', { x: PAD.left - 6, y: H - PAD.bottom, class: 'label cost', 'text-anchor': 'end' }, '$0'));
  root.append(svg('text', { x: W - PAD.right + 6, y: PAD.top + 10, class: 'label done' }, maxDone + ' done'));
  root.append(svg('text', { x: W - PAD.right + 6, y: H - PAD.bottom, class: 'label done' }, '0'));
  root.append(svg('text', { x: PAD.left, y: H - 8, class: 'label' }, new Date(t0).toLocaleTimeString()));
  root.append(svg('text', { x: W - PAD.right, y: H - 8, class: 'label', 'text-anchor': 'end' }, '+' + duration(span)));
  box.append(root);
  const last = rows[rows.length - 1];
  const legend = el('figcaption', 'legend');
  legend.append(
    el('span', 'key cost', 'spend ' + usd(last.cost)),
    el('span', 'key done', 'verified + merged ' + last.done),
    el('span', 'key', 'running ' + last.running),
  );
  box.append(legend);
  return box;
}
`;
