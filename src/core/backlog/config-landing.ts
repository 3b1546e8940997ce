/**
 * The front matter's settings of how verified work lands: `land: merge | pr`, `remote:`, `forge:`,
 * `pr: { draft, labels, reviewers, sync, allow, timeout }` and `review_capacity:`. Every problem is reported at the line of its key; a reader returns
 * undefined after reporting one, so the caller keeps the default.
 */
import { isMap, isScalar, isSeq, type Node } from 'yaml';
import { LAND_MODES, type ForgeSetting, type LandMode, type PrSettings } from '../../domain/types.js';
import { parseInterval } from '../text/parse-units.js';
import { didYouMean } from './closest.js';
import type { Reader } from './config-values.js';

export const DEFAULT_PR: Readonly<PrSettings> = Object.freeze({
  draft: true,
  labels: Object.freeze(['loopfleet']) as unknown as string[],
  reviewers: Object.freeze([]) as unknown as string[],
  // Each open PR costs a handful of API requests per pass: every 5 minutes keeps 30 open PRs well inside GitHub's hourly limit.
  syncEveryMs: 5 * 60_000,
  allow: Object.freeze([]) as unknown as string[],
  // A forge that accepts a request and never answers must not hang a sync or a night.
  timeoutMs: 30_000,
});

export const FORGE_KINDS = ['auto', 'github', 'gitlab', 'none'] as const;
const PR_KEYS = ['draft', 'labels', 'reviewers', 'sync', 'allow', 'timeout'] as const;

/** A git remote's name as `git remote add` takes it: no spaces, no leading dash, no `..`. */
const REMOTE_NAME = /^(?!-)(?!.*\.\.)[A-Za-z0-9._/-]+$/;
/** `owner/name` on GitHub, `group/sub/project` on GitLab. */
const REPO_PATH = /^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)+$/;
/** A forge user name or label as the forges allow them (labels may hold spaces). */
const USER_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?$/;

export function readLand(r: Reader, node: Node | null, at: Node): LandMode | undefined {
  const v = r.scalar('land', node, at);
  if (v === undefined) return undefined;
  if ((LAND_MODES as readonly unknown[]).includes(v)) return v as LandMode;
  return r.fail(at, `land must be ${LAND_MODES.join(' or ')}, got '${String(v)}'`);
}

export function readRemote(r: Reader, node: Node | null, at: Node): string | undefined {
  const v = r.text('remote', node, at);
  if (v === undefined) return undefined;
  if (v === null) return r.fail(at, 'remote needs the name of a git remote, e.g. origin');
  if (!REMOTE_NAME.test(v)) return r.fail(at, `remote must name a git remote (letters, digits, . _ / -), got '${v}'`);
  return v;
}

/**
 * `review_capacity: N` — how many tasks may be running or waiting for a person at once; `none` (or `off`,
 * `unlimited`) or an empty value: no cap. Anything but a whole number of at least 1 is refused at its line.
 */
export function readReviewCapacity(r: Reader, node: Node | null, at: Node): number | null | undefined {
  const v = r.scalar('review_capacity', node, at);
  if (v === undefined) return undefined;
  if (v === null || (typeof v === 'string' && ['none', 'off', 'unlimited'].includes(v.trim().toLowerCase())))
    return null;
  return r.wholeNumber('review_capacity', node, at, 1, false);
}

/** `forge: auto | github | gitlab | none`, or `forge: { type: github, repo: owner/name }`. */
export function readForge(r: Reader, node: Node | null, at: Node): ForgeSetting | undefined {
  if (isMap(node)) {
    let type: string | undefined;
    let repo: string | undefined;
    for (const pair of node.items) {
      const keyNode = pair.key as Node;
      const key = isScalar(keyNode) ? String(keyNode.value) : '?';
      const value = r.text(`forge.${key}`, (pair.value ?? null) as Node | null, keyNode);
      if (key === 'type') type = value ?? '';
      else if (key === 'repo') repo = value ?? '';
      else
        return r.fail(
          keyNode,
          `unknown key 'forge.${key}'${didYouMean(key, ['type', 'repo'])}; forge takes type and repo`,
        );
      if (value === undefined) return undefined;
    }
    if (type !== 'github' && type !== 'gitlab')
      return r.fail(at, `forge.type must be github or gitlab, got '${type ?? ''}'`);
    if (repo === undefined || !REPO_PATH.test(repo))
      return r.fail(at, `forge.repo must name the repository as owner/name, got '${repo ?? ''}'`);
    return { type, repo };
  }
  const v = r.scalar('forge', node, at);
  if (v === undefined) return undefined;
  if ((FORGE_KINDS as readonly unknown[]).includes(v)) return v as ForgeSetting;
  return r.fail(
    at,
    `forge must be ${FORGE_KINDS.join(', ')} or { type: github, repo: owner/name }, got '${String(v)}'`,
  );
}

function readNames(
  r: Reader,
  key: string,
  node: Node | null,
  at: Node,
  pattern: RegExp,
  example: string,
): string[] | undefined {
  if (node === null || (isScalar(node) && node.value === null)) return [];
  const items = isSeq(node) ? (node.items as Node[]) : [node];
  const names: string[] = [];
  for (const item of items) {
    const name =
      isScalar(item) && (typeof item.value === 'string' || typeof item.value === 'number')
        ? String(item.value).trim()
        : null;
    if (name === null || !pattern.test(name)) {
      r.error(
        item ?? at,
        `${key} must be a list of names, e.g. ${example}, got '${isScalar(item) ? String(item.value) : 'a mapping'}'`,
      );
      return undefined;
    }
    if (!names.includes(name)) names.push(name);
  }
  return names;
}

/** `pr: { draft: true, labels: [loopfleet], reviewers: [] }`; an unset key keeps its default. */
export function readPr(r: Reader, node: Node | null, at: Node): PrSettings | undefined {
  const pr: PrSettings = { ...DEFAULT_PR, labels: [...DEFAULT_PR.labels], reviewers: [], allow: [] };
  if (node === null || (isScalar(node) && node.value === null)) return pr;
  if (!isMap(node))
    return r.fail(at, 'pr must be a mapping, e.g. pr: { draft: true, labels: [loopfleet], reviewers: [] }');
  for (const pair of node.items) {
    const keyNode = pair.key as Node;
    const key = isScalar(keyNode) ? String(keyNode.value) : '?';
    const value = (pair.value ?? null) as Node | null;
    switch (key) {
      case 'draft': {
        const v = r.scalar('pr.draft', value, keyNode);
        if (typeof v === 'boolean') pr.draft = v;
        else if (v !== undefined) return r.fail(keyNode, `pr.draft must be true or false, got '${String(v)}'`);
        else return undefined;
        break;
      }
      case 'labels': {
        const labels = readNames(r, 'pr.labels', value, keyNode, /^[^\s,][^,\n]{0,49}$/, '[loopfleet]');
        if (labels === undefined) return undefined;
        pr.labels = labels;
        break;
      }
      case 'reviewers': {
        const reviewers = readNames(r, 'pr.reviewers', value, keyNode, USER_NAME, '[octocat]');
        if (reviewers === undefined) return undefined;
        pr.reviewers = reviewers;
        break;
      }
      case 'sync': {
        const v = r.scalar('pr.sync', value, keyNode);
        if (v === undefined) return undefined;
        const p = v === null || typeof v === 'boolean' ? null : parseInterval(String(v));
        if (p === null || !p.ok)
          return r.fail(keyNode, `pr.sync must be an interval such as 2m or 30s, got '${String(v)}'`);
        pr.syncEveryMs = p.value;
        break;
      }
      case 'allow': {
        const allow = readNames(r, 'pr.allow', value, keyNode, USER_NAME, '[octocat]');
        if (allow === undefined) return undefined;
        pr.allow = allow;
        break;
      }
      case 'timeout': {
        const v = r.scalar('pr.timeout', value, keyNode);
        if (v === undefined) return undefined;
        const p = v === null || typeof v === 'boolean' ? null : parseInterval(String(v));
        if (p === null || !p.ok || p.value < 1000)
          return r.fail(keyNode, `pr.timeout must be an interval of a second or more such as 30s, got '${String(v)}'`);
        pr.timeoutMs = p.value;
        break;
      }
      default:
        return r.fail(keyNode, `unknown key 'pr.${key}'${didYouMean(key, PR_KEYS)}; pr takes ${PR_KEYS.join(', ')}`);
    }
  }
  return pr;
}
