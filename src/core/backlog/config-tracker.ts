/**
 * The front matter's `tracker:` setting: `tracker: { type: github, label: loopfleet }` (or `type: gitlab`), or
 * `tracker: { type: linear, team: ENG, label: loopfleet }`, with the optional `labels: { prefix }`, `poll:`,
 * `pages:` and (Linear) `states: { running: "In Progress", … }`. Every problem is reported at the line of its
 * key; the reader returns undefined after reporting one, so the tracker stays off.
 */
import { isMap, isScalar, type Node } from 'yaml';
import { DEFAULT_TRACKER, TRACKER_STATES, TRACKER_TYPES, type TrackerSetting } from '../../domain/tracker-setting.js';
import { parseInterval } from '../text/parse-units.js';
import { didYouMean } from './closest.js';
import type { Reader } from './config-values.js';

const TRACKER_KEYS = ['type', 'label', 'labels', 'poll', 'pages', 'team', 'states'] as const;
/** A label as the forges allow it: no comma, no line break, at most 50 characters. */
const LABEL = /^[^\s,][^,\n]{0,49}$/;
/** A Linear team's key, as Linear allows it: a letter, then letters and digits. */
const TEAM_KEY = /^[A-Z][A-Z0-9]{0,9}$/;

function keyOf(node: Node): string {
  return isScalar(node) ? String(node.value) : '?';
}

export function readTracker(r: Reader, node: Node | null, at: Node): TrackerSetting | undefined {
  if (node === null || (isScalar(node) && node.value === null)) return undefined;
  if (!isMap(node)) return r.fail(at, 'tracker must be a mapping, e.g. tracker: { type: github, label: loopfleet }');
  let type: string | null = null;
  let label: string | null = null;
  let labelsGiven = false;
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
        labelsGiven = true;
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
      case 'team': {
        const v = r.text('tracker.team', value, keyNode);
        if (v === undefined) return undefined;
        if (v === null || !TEAM_KEY.test(v))
          return r.fail(keyNode, `tracker.team must be a Linear team's key such as ENG, got '${v ?? ''}'`);
        setting.team = v;
        break;
      }
      case 'states': {
        const states = readStates(r, keyNode, value);
        if (states === undefined) return undefined;
        setting.states = states;
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
    return r.fail(
      at,
      `tracker.type must be ${TRACKER_TYPES.slice(0, -1).join(', ')} or ${TRACKER_TYPES.at(-1)}, got '${type ?? ''}'`,
    );
  }
  if (type === 'linear' && setting.team === undefined)
    return r.fail(at, 'tracker: linear needs team: the key of the Linear team whose issues are tasks, e.g. team: ENG');
  if (type !== 'linear' && (setting.team !== undefined || setting.states !== undefined))
    return r.fail(at, `tracker.team and tracker.states are Linear's; tracker: ${type} takes neither`);
  if (type === 'linear' && !labelsGiven) setting.stateLabels = false;
  if (label === null || !LABEL.test(label))
    return r.fail(
      at,
      `tracker.label must name the label that makes an issue a task, e.g. loopfleet, got '${label ?? ''}'`,
    );
  if (label.startsWith(setting.labelPrefix))
    return r.fail(at, `tracker.label '${label}' must not start with the state labels' prefix '${setting.labelPrefix}'`);
  return { type: type as TrackerSetting['type'], label, ...setting };
}

/** `states: { running: "In Progress", verified: "In Review", merged: "Done" }`: a workflow state's name per task state. */
function readStates(r: Reader, keyNode: Node, value: Node | null): TrackerSetting['states'] | undefined {
  if (!isMap(value))
    return r.fail(keyNode, 'tracker.states must be a mapping, e.g. states: { running: "In Progress", merged: "Done" }');
  const states: NonNullable<TrackerSetting['states']> = {};
  for (const inner of value.items) {
    const innerKey = inner.key as Node;
    const state = keyOf(innerKey);
    if (!(TRACKER_STATES as readonly string[]).includes(state))
      return r.fail(
        innerKey,
        `unknown key 'tracker.states.${state}'${didYouMean(state, TRACKER_STATES)}; tracker.states takes ${TRACKER_STATES.join(', ')}`,
      );
    const v = r.text(`tracker.states.${state}`, (inner.value ?? null) as Node | null, innerKey);
    if (v === undefined) return undefined;
    if (v === null || v.trim() === '' || v.length > 100 || /[\n\r]/.test(v))
      return r.fail(innerKey, `tracker.states.${state} must name a workflow state of the team, got '${v ?? ''}'`);
    states[state as keyof typeof states] = v.trim();
  }
  return states;
}
