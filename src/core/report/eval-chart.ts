/**
 * The eval chart as SVG: per configuration, the verified share as a bar with its 95 % interval as a
 * whisker (left panel, 0–100 %), and the cost per verified task as a bar scaled to the largest (right
 * panel). Hand-written rather than a charting library: two bar panels are a few rects, and every piece
 * of text — configuration names come from the command line — goes in as an escaped SVG text node.
 */

export interface ChartRow {
  name: string;
  share: number;
  ci95: readonly [number, number];
  costPerVerified: number | null;
}

/** Text for an SVG text node or attribute: the five characters XML gives meaning to, escaped. */
export function xmlText(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const WIDTH = 760;
const ROW = 36;
const TOP = 48;
const LABEL = 150;
const PANEL = 250;
const GAP = 40;

const f = (x: number) => Number(x.toFixed(1));

export function evalChart(rows: readonly ChartRow[], title: string): string {
  const height = TOP + rows.length * ROW + 24;
  const shareX = LABEL;
  const costX = LABEL + PANEL + GAP;
  const maxCost = Math.max(0, ...rows.map((r) => r.costPerVerified ?? 0));
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif" font-size="12">`,
    `<title>${xmlText(title)}</title>`,
    `<rect width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    `<text x="${shareX}" y="20" font-weight="bold">verified share (95 % interval)</text>`,
    `<text x="${costX}" y="20" font-weight="bold">cost per verified task (USD)</text>`,
    `<line x1="${shareX}" y1="${TOP - 12}" x2="${shareX}" y2="${height - 20}" stroke="#999"/>`,
    `<line x1="${costX}" y1="${TOP - 12}" x2="${costX}" y2="${height - 20}" stroke="#999"/>`,
    `<text x="${shareX}" y="${height - 6}" fill="#666">0 %</text>`,
    `<text x="${shareX + PANEL}" y="${height - 6}" fill="#666" text-anchor="end">100 %</text>`,
  ];
  rows.forEach((r, i) => {
    const y = TOP + i * ROW;
    const mid = y + 10;
    parts.push(`<text x="${LABEL - 8}" y="${mid + 4}" text-anchor="end">${xmlText(r.name)}</text>`);
    parts.push(`<rect x="${shareX}" y="${y}" width="${f(r.share * PANEL)}" height="20" fill="#4e79a7"/>`);
    const [lo, hi] = r.ci95;
    const x1 = f(shareX + lo * PANEL);
    const x2 = f(shareX + hi * PANEL);
    parts.push(`<line x1="${x1}" y1="${mid}" x2="${x2}" y2="${mid}" stroke="#222" stroke-width="1.5"/>`);
    parts.push(`<line x1="${x1}" y1="${y + 3}" x2="${x1}" y2="${y + 17}" stroke="#222"/>`);
    parts.push(`<line x1="${x2}" y1="${y + 3}" x2="${x2}" y2="${y + 17}" stroke="#222"/>`);
    parts.push(`<text x="${shareX + PANEL + 4}" y="${mid + 4}" font-size="11">${Math.round(r.share * 100)} %</text>`);
    if (r.costPerVerified === null) {
      parts.push(`<text x="${costX + 4}" y="${mid + 4}" fill="#666">none verified</text>`);
    } else {
      const w = maxCost === 0 ? 0 : f((r.costPerVerified / maxCost) * PANEL);
      parts.push(`<rect x="${costX}" y="${y}" width="${w}" height="20" fill="#f28e2b"/>`);
      parts.push(`<text x="${f(costX + w + 4)}" y="${mid + 4}" font-size="11">$${r.costPerVerified.toFixed(4)}</text>`);
    }
  });
  parts.push('</svg>', '');
  return parts.join('\n');
}
