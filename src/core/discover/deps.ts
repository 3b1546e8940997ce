/**
 * Outdated and vulnerable npm dependencies, from the JSON of `npm outdated --json` and `npm audit --json`.
 * Both need the registry; what they print is parsed here, so recorded output parses exactly as live output.
 * One proposal per package: a vulnerable package is high priority (by severity, critical first), an
 * outdated one low; a package that is both is one proposal. A package npm lists only because it is not
 * installed is not proposed.
 */
import type { Proposal } from './proposal.js';
import { oneLine } from './text.js';

export const SEVERITIES = ['critical', 'high', 'moderate', 'low', 'info'] as const;

/** The JSON value in a command's output, skipping any noise printed before it; null when there is none. */
export function jsonIn(output: string): unknown {
  const start = output.search(/[[{]/);
  if (start < 0) return null;
  try {
    return JSON.parse(output.slice(start)) as unknown;
  } catch {
    return null;
  }
}

type Json = Record<string, unknown>;
/** npm package names: anything else in the output is not used as one. */
const PACKAGE_NAME = /^(?:@[\w.~-]+\/)?[\w.~-]+$/;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/** npm's `{"error": {...}}`, as a sentence; null when the JSON is not an error. */
export function npmError(json: unknown): string | null {
  if (!isObject(json) || !isObject(json.error)) return null;
  const e = json.error;
  return oneLine(`${str(e.code) ?? 'error'}: ${str(e.summary) ?? str(e.detail) ?? 'npm failed'}`, 200);
}

export interface Outdated {
  name: string;
  current: string | null;
  wanted: string | null;
  latest: string | null;
}

export function parseOutdated(json: unknown): Outdated[] {
  if (!isObject(json) || npmError(json) !== null) return [];
  return Object.entries(json)
    .filter(([name]) => PACKAGE_NAME.test(name))
    .map(([name, raw]) => {
      const v = Array.isArray(raw) ? raw[0] : raw;
      const o = isObject(v) ? v : {};
      return { name, current: str(o.current), wanted: str(o.wanted), latest: str(o.latest) };
    });
}

export interface Vulnerability {
  name: string;
  severity: (typeof SEVERITIES)[number];
  range: string | null;
  direct: boolean;
  advisories: string[];
  fix: string;
}

export function parseAudit(json: unknown): Vulnerability[] {
  if (!isObject(json) || !isObject(json.vulnerabilities)) return [];
  return Object.entries(json.vulnerabilities)
    .filter(([name]) => PACKAGE_NAME.test(name))
    .map(([name, raw]) => {
      const v = isObject(raw) ? raw : {};
      const severity = (SEVERITIES as readonly string[]).includes(String(v.severity))
        ? (v.severity as Vulnerability['severity'])
        : 'info';
      const via = Array.isArray(v.via) ? v.via : [];
      const advisories = via
        .filter(isObject)
        .map((a) => oneLine(`${str(a.title) ?? 'advisory'}${str(a.url) ? ` (${str(a.url)})` : ''}`, 200));
      const through = via.filter((a): a is string => typeof a === 'string');
      if (advisories.length === 0 && through.length > 0) advisories.push(`through ${through.join(', ')}`);
      const fix =
        v.fixAvailable === true
          ? '`npm audit fix` fixes it'
          : isObject(v.fixAvailable)
            ? `fixed by updating ${str(v.fixAvailable.name) ?? name} to ${str(v.fixAvailable.version) ?? 'a newer version'}${v.fixAvailable.isSemVerMajor === true ? ' (a major version: check the breaking changes)' : ''}`
            : 'no fix is available yet: consider replacing or removing it';
      return { name, severity, range: str(v.range), direct: v.isDirect === true, advisories, fix };
    });
}

const LOCK_NOTE =
  'Updating it changes package-lock.json, which a task may not change by default: allow it with `protect: ["!package-lock.json"]` in the front matter, or do this one yourself.';

export function depProposals(outdated: readonly Outdated[], vulnerable: readonly Vulnerability[]): Proposal[] {
  const out: Proposal[] = [];
  const old = new Map(outdated.map((o) => [o.name, o]));
  const sorted = [...vulnerable].sort((a, b) => SEVERITIES.indexOf(a.severity) - SEVERITIES.indexOf(b.severity));
  for (const v of sorted) {
    const o = old.get(v.name);
    old.delete(v.name);
    out.push({
      from: 'deps',
      title: `Fix the ${v.severity} vulnerability in ${v.name}`,
      source: `dep ${v.name}`,
      priority: 'high',
      summary: [
        `npm audit reports a ${v.severity} vulnerability in ${v.direct ? 'the dependency' : 'the indirect dependency'} ${v.name}${v.range ? ` (${v.range})` : ''}: ${v.fix}.`,
        ...(o ? [`It is also outdated: ${o.current ?? 'not installed'}, latest ${o.latest ?? '?'}.`] : []),
        LOCK_NOTE,
      ],
      quoted: v.advisories.join('\n'),
      rank: SEVERITIES.indexOf(v.severity) / 10,
    });
  }
  // Not installed (no node_modules): npm cannot tell whether it is behind, only that it is missing.
  for (const o of [...old.values()].filter((o) => o.current !== null)) {
    out.push({
      from: 'deps',
      title: `Update ${o.name} to ${o.latest ?? o.wanted ?? 'its latest version'}`,
      source: `dep ${o.name}`,
      priority: 'low',
      summary: [
        `npm outdated: ${o.name} is at ${o.current ?? 'no installed version'}; wanted ${o.wanted ?? '?'}, latest ${o.latest ?? '?'}. Update it and adapt the code to any breaking change.`,
        LOCK_NOTE,
      ],
      rank: 5,
    });
  }
  return out;
}
