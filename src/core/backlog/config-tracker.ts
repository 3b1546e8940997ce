/**
 * The front matter's `tracker:` setting: `tracker: { type: github, label: loopfleet }` (or `type: gitlab`),
 * with the optional `labels: { prefix }`, `poll:` and `pages:`. Every problem is reported at the line of its
 * key; the reader returns undefined after reporting one, so the tracker stays off.
 */
import { isMap, isScalar, type Node } from 'yaml';
import { DEFAULT_TRACKER, TRACKER_TYPES, type TrackerSetting } from '../../domain/tracker-setting.js';
import { parseInterval } from '../text/parse-units.js';
import { didYouMean } from './closest.js';
import type { Reader } from './config-values.js';

const TRACKER_KEYS = ['type', 'label', 'labels', 'poll', 'pages'] as const;
/** A label as the forges allow it: no comma, no line break, at most 50 characters. */
const LABEL = /^[^\s,][^,\n]{0,49}$/;
/** Planned trackers: named in the refusal so that nobody mistakes them for a typing error. */
const LATER = ['linear'];

function keyOf(node: Node): string {
  return isScalar(node) ? String(node.value) : '?';
}

export function readTracker(r: Reader, node: Node | null, at: Node): TrackerSetting | undefined {
  if (node === null || (isScalar(node) && node.value === null)) return undefined;
  if (!isMap(node)) return r.fail(at, 'tracker must be a mapping, e.g. tracker: { type: github, label: loopfleet }');
  let type: string | null = null;
  let label: string | null = null;
  const setting: Omit<TrackerSetting, 'type' | 'label'> = { ...DEFAULT_TRACKER };
  for (const pair of node.items) {
    const keyNode = pair.key as Node;
    const key = keyOf(keyNode);
    const value = (pair.value ?? null) as Node | null;
    switch (key) {
      case 'type':
      case 'label': {
        const v = r.text(`tracker.${key}`, value, keyNode);
        if (v === undefined) return undefined;
        if (key === 'type') type = v;
        else label = v;
        break;
      }
      case 'labels': {
        if (!isMap(value))
          return r.fail(keyNode, "tracker.labels must be a mapping, e.g. labels: { prefix: 'loopfleet:' }");
        for (const inner of value.items) {
          const innerKey = inner.key as Node;
          if (keyOf(innerKey) !== 'prefix')
            return r.fail(innerKey, `unknown key 'tracker.labels.${keyOf(innerKey)}'; tracker.labels takes prefix`);
          const v = r.text('tracker.labels.prefix', (inner.value ?? null) as Node | null, innerKey);
          if (v === undefined) return undefined;
          if (v === null || !LABEL.test(`${v}running`) || v.length > 40)
            return r.fail(
              innerKey,
              `tracker.labels.prefix must start a label (no comma, at most 40 characters), got '${v ?? ''}'`,
            );
          setting.labelPrefix = v;
        }
        break;
      }
      case 'poll': {
        const v = r.scalar('tracker.poll', value, keyNode);
        if (v === undefined) return undefined;
        const p = v === null || typeof v === 'boolean' ? null : parseInterval(String(v));
        if (p === null || !p.ok || p.value < 10_000)
          return r.fail(keyNode, `tracker.poll must be an interval of 10s or more such as 1m, got '${String(v)}'`);
        setting.pollEveryMs = p.value;
        break;
      }
      case 'pages': {
        const v = r.wholeNumber('tracker.pages', value, keyNode, 1, false);
        if (v === undefined) return undefined;
        if (v > 50) return r.fail(keyNode, `tracker.pages must be at most 50, got ${v}`);
        setting.maxPages = v;
        break;
      }
      default:
        return r.fail(
          keyNode,
          `unknown key 'tracker.${key}'${didYouMean(key, TRACKER_KEYS)}; tracker takes ${TRACKER_KEYS.join(', ')}`,
        );
    }
  }
  if (type === null || !(TRACKER_TYPES as readonly string[]).includes(type)) {
    const later = type !== null && LATER.includes(type) ? ` (${type} is not supported yet)` : '';
    return r.fail(at, `tracker.type must be ${TRACKER_TYPES.join(' or ')}, got '${type ?? ''}'${later}`);
  }
  if (label === null || !LABEL.test(label))
    return r.fail(
      at,
      `tracker.label must name the label that makes an issue a task, e.g. loopfleet, got '${label ?? ''}'`,
    );
  if (label.startsWith(setting.labelPrefix))
    return r.fail(at, `tracker.label '${label}' must not start with the state labels' prefix '${setting.labelPrefix}'`);
  return { type: type as TrackerSetting['type'], label, ...setting };
}
