/**
 * The front matter's settings of a fleet left running: `notify_on:` (which changes reach the notify
 * command) and `discover: { every, only }` (how often `--watch` runs discover, with which finders).
 */
import { isMap, isScalar, isSeq, type Node } from 'yaml';
import { DISCOVER_SOURCES, NOTIFY_KINDS, type DiscoverSource, type NotifyKind } from '../../domain/types.js';
import { parseInterval } from '../text/parse-units.js';
import { didYouMean } from './closest.js';
import type { Reader } from './config-values.js';

/** A list of names from `known` (a YAML list, or one name); undefined after reporting a problem. */
function readNames<T extends string>(
  r: Reader,
  key: string,
  node: Node | null,
  at: Node,
  known: readonly T[],
): T[] | undefined {
  const items =
    node === null || (isScalar(node) && node.value === null) ? [] : isSeq(node) ? (node.items as Node[]) : [node];
  const names: T[] = [];
  for (const item of items) {
    if (!isScalar(item) || typeof item.value !== 'string' || item.value.trim() === '') {
      r.error(item ?? at, `${key} must be a list of names, e.g. [${known.slice(0, 2).join(', ')}]`);
      return undefined;
    }
    const name = item.value.trim() as T;
    if (!known.includes(name)) {
      r.error(item, `${key}: unknown name '${name}'${didYouMean(name, known)}; known: ${known.join(', ')}`);
      return undefined;
    }
    if (!names.includes(name)) names.push(name);
  }
  if (names.length === 0) {
    r.error(at, `${key} needs at least one of ${known.join(', ')}`);
    return undefined;
  }
  return names;
}

/** `notify_on: [verified, failed, gate, summary]`. */
export function readNotifyOn(r: Reader, node: Node | null, at: Node): NotifyKind[] | undefined {
  return readNames(r, 'notify_on', node, at, NOTIFY_KINDS);
}

/** `discover: { every: 1d, only: [todo, tests] }`; `only` defaults to every finder. */
export function readDiscover(
  r: Reader,
  node: Node | null,
  at: Node,
): { everyMs: number; only: DiscoverSource[] } | null | undefined {
  if (node === null || (isScalar(node) && node.value === null)) return null;
  if (!isMap(node)) {
    r.error(at, 'discover must be a mapping, e.g. discover: { every: 1d, only: [todo, tests] }');
    return undefined;
  }
  let everyMs: number | undefined;
  let only: DiscoverSource[] = [...DISCOVER_SOURCES];
  for (const pair of node.items) {
    const keyNode = pair.key as Node;
    const key = isScalar(keyNode) ? String(keyNode.value) : '?';
    const value = (pair.value ?? null) as Node | null;
    if (key === 'every') {
      const raw = isScalar(value) ? value.value : undefined;
      const parsed = typeof raw === 'string' || typeof raw === 'number' ? parseInterval(raw) : null;
      if (parsed === null || !parsed.ok) {
        r.error(value ?? keyNode, `discover.every: ${parsed?.message ?? 'needs an interval, e.g. 1d or 6h'}`);
        return undefined;
      }
      everyMs = parsed.value;
    } else if (key === 'only') {
      const names = readNames(r, 'discover.only', value, keyNode, DISCOVER_SOURCES);
      if (names === undefined) return undefined;
      only = names;
    } else {
      r.error(keyNode, `discover: unknown key '${key}'${didYouMean(key, ['every', 'only'])}; known: every, only`);
      return undefined;
    }
  }
  if (everyMs === undefined) {
    r.error(at, 'discover needs every:, e.g. discover: { every: 1d }');
    return undefined;
  }
  return { everyMs, only };
}
