/**
 * Fleet settings: BACKLOG.md front matter → FleetConfig, defaults applied, every problem reported with its
 * file line. Invariant: the returned config is complete and valid even when problems were found (defaults
 * stand in for bad values), but callers must not use it when `errors` grew.
 */
import { isMap, isScalar, isSeq, type Node } from 'yaml';
import type { InputError } from '../../domain/errors.js';
import { AUTONOMY_LEVELS, type Autonomy, type FleetConfig, type ModelPrice } from '../../domain/types.js';
import { MAX_PARALLEL } from '../../domain/layout.js';
import { parseDuration, parseSize, parseUsd } from '../text/parse-units.js';
import { checksFromNode } from './check-list.js';
import { readDiscover, readNotifyOn } from './config-cadence.js';
import { DEFAULT_PR, readForge, readLand, readPr, readRemote, readReviewCapacity } from './config-landing.js';
import { readTracker } from './config-tracker.js';
import { didYouMean } from './closest.js';
import { Reader, readEnvNames, readPorts, readPrices, readProtect } from './config-values.js';
import type { FrontMatter } from './front-matter.js';

export { PRICE_KEYS } from './config-values.js';

/**
 * Paths an agent may not change on a task branch: CI and repository automation (a task branch must not
 * rewrite what verifies it), environment files (secrets), lock files (dependency changes are a
 * person's decision; an agent that needs one says so), and agent instruction files (an implementer must
 * not write what a later role's CLI loads as instructions). Patterns from the front matter are added after
 * these, gitignore-style, so `!package-lock.json` lifts one of them.
 */
export const DEFAULT_PROTECT: readonly string[] = Object.freeze([
  '.github/**',
  '.gitlab-ci.yml',
  '.env*',
  'package-lock.json',
  'npm-shrinkwrap.json',
  'yarn.lock',
  'pnpm-lock.yaml',
  'bun.lockb',
  'Cargo.lock',
  'poetry.lock',
  'uv.lock',
  'Gemfile.lock',
  'composer.lock',
  'go.sum',
  // Instructions and settings agent CLIs load as trusted (a reviewer's CLI among them), MCP servers included.
  'CLAUDE.md',
  'CLAUDE.local.md',
  'AGENTS.md',
  'AGENT.md',
  'GEMINI.md',
  '.claude/**',
  '.gemini/**',
  '.codex/**',
  '.opencode/**',
  'opencode.json',
  'opencode.jsonc',
  '.mcp.json',
  '.cursor/**',
  '.cursorrules',
  '.windsurfrules',
  '.clinerules',
]);

export const DEFAULT_MODEL = 'claude-sonnet-5-5';

export const DEFAULT_CONFIG: Readonly<FleetConfig> = Object.freeze({
  base: null,
  concurrency: 3,
  check: null,
  setup: null,
  model: DEFAULT_MODEL,
  review: true,
  parallel: 1,
  gates: Object.freeze({ attempts: 3, tokens: 500_000, timeMs: 30 * 60_000, costUsd: null }),
  fleetGates: Object.freeze({ tokens: null, costUsd: null, timeMs: null }),
  ports: Object.freeze({ from: 4100, to: 4199 }),
  notify: null,
  sandbox: 'auto',
  maxFiles: 50,
  maxLines: 2000,
  protect: DEFAULT_PROTECT as string[],
  maxFileBytes: 5_000_000,
  maxBytes: 10_000_000,
  tests: Object.freeze([]) as unknown as string[],
  prices: Object.freeze({}) as Record<string, ModelPrice>,
  checkTimeoutMs: 10 * 60_000,
  setupTimeoutMs: 10 * 60_000,
  env: Object.freeze([]) as unknown as string[],
  discovered: 'hold',
  lessons: true,
  autonomy: 'review',
  prove: false,
  notifyOn: null,
  discover: null,
  land: 'merge',
  remote: 'origin',
  // `forge:` stays unset unless written: doctor checks a forge only for a fleet that asks for one.
  pr: DEFAULT_PR,
  reviewCapacity: null,
}) as Readonly<FleetConfig>;

/** A fresh, mutable copy of the defaults. */
export function defaultConfig(): FleetConfig {
  return {
    ...DEFAULT_CONFIG,
    gates: { ...DEFAULT_CONFIG.gates },
    fleetGates: { ...DEFAULT_CONFIG.fleetGates },
    ports: { ...DEFAULT_CONFIG.ports },
    protect: [...DEFAULT_CONFIG.protect],
    tests: [],
    prices: {},
    env: [],
    pr: { ...DEFAULT_PR, labels: [...DEFAULT_PR.labels], reviewers: [] },
  };
}

export const CONFIG_KEYS = [
  'base',
  'concurrency',
  'check',
  'setup',
  'model',
  'review',
  'gates',
  'ports',
  'notify',
  'sandbox',
  'max_files',
  'max_lines',
  'protect',
  'prices',
  'check_timeout',
  'setup_timeout',
  'env',
  'discovered',
  'lessons',
  'autonomy',
  'max_file_bytes',
  'max_bytes',
  'tests',
  'prove',
  'network',
  'notify_on',
  'discover',
  'land',
  'remote',
  'forge',
  'pr',
  'review_capacity',
  'tracker',
  'parallel',
] as const;
type ConfigKey = (typeof CONFIG_KEYS)[number];

export const GATE_KEYS = ['attempts', 'tokens', 'time', 'cost', 'fleet_tokens', 'fleet_cost', 'fleet_time'] as const;
type GateKey = (typeof GATE_KEYS)[number];

function readGates(r: Reader, node: Node | null, at: Node, config: FleetConfig): void {
  if (node === null || (isScalar(node) && node.value === null)) return;
  if (!isMap(node)) return void r.error(at, 'gates must be a mapping of gate: value lines');
  for (const pair of node.items) {
    const keyNode = pair.key as Node;
    const key = isScalar(keyNode) ? String(keyNode.value) : '?';
    const value = (pair.value ?? null) as Node | null;
    const name = `gates.${key}`;
    if (!(GATE_KEYS as readonly string[]).includes(key)) {
      r.error(keyNode, `unknown gate '${key}'${didYouMean(key, GATE_KEYS)}; known gates: ${GATE_KEYS.join(', ')}`);
      continue;
    }
    const set = <T>(v: T | undefined, apply: (v: T) => void): void => {
      if (v !== undefined) apply(v);
    };
    switch (key as GateKey) {
      case 'attempts':
        set(r.wholeNumber(name, value, keyNode, 1, false), (v) => (config.gates.attempts = v));
        break;
      case 'tokens':
        set(r.limit(name, value, keyNode, parseSize), (v) => (config.gates.tokens = v));
        break;
      case 'time':
        set(r.limit(name, value, keyNode, parseDuration), (v) => (config.gates.timeMs = v));
        break;
      case 'cost':
        set(r.limit(name, value, keyNode, parseUsd), (v) => (config.gates.costUsd = v));
        break;
      case 'fleet_tokens':
        set(r.limit(name, value, keyNode, parseSize), (v) => (config.fleetGates.tokens = v));
        break;
      case 'fleet_cost':
        set(r.limit(name, value, keyNode, parseUsd), (v) => (config.fleetGates.costUsd = v));
        break;
      case 'fleet_time':
        set(r.limit(name, value, keyNode, parseDuration), (v) => (config.fleetGates.timeMs = v));
        break;
    }
  }
}

/** A list of gitignore-style path patterns (one pattern alone is a list of one). */
function readPatterns(r: Reader, key: string, node: Node | null, at: Node): string[] | undefined {
  if (node === null || (isScalar(node) && node.value === null)) return [];
  const items = isSeq(node) ? (node.items as Node[]) : [node];
  const patterns: string[] = [];
  for (const item of items) {
    if (!isScalar(item) || typeof item.value !== 'string' || item.value.trim() === '') {
      r.error(item ?? at, `${key} must be a list of path patterns, e.g. - e2e/**`);
      return undefined;
    }
    patterns.push(item.value.trim());
  }
  return patterns;
}

/** Reads the front matter mapping into a config; problems go to `errors`. */
export function readConfig(fm: FrontMatter, file: string, errors: InputError[]): FleetConfig {
  const config = defaultConfig();
  const doc = fm.doc;
  if (doc === null || doc.contents === null || (isScalar(doc.contents) && doc.contents.value === null)) return config;
  const r = new Reader(file, errors, fm.lineOf);
  if (!isMap(doc.contents)) {
    r.error(doc.contents, 'front matter must be a YAML mapping of key: value lines');
    return config;
  }
  const lines: Partial<Record<ConfigKey, Node>> = {};
  for (const pair of doc.contents.items) {
    const keyNode = pair.key as Node;
    const key = isScalar(keyNode) ? String(keyNode.value) : '?';
    const value = (pair.value ?? null) as Node | null;
    if (!(CONFIG_KEYS as readonly string[]).includes(key)) {
      const where = (GATE_KEYS as readonly string[]).includes(key)
        ? ` ('${key}' is a gate: put it under gates:)`
        : didYouMean(key, CONFIG_KEYS);
      r.error(keyNode, `unknown key '${key}'${where}`);
      continue;
    }
    lines[key as ConfigKey] = keyNode;
    const assign = <K extends keyof FleetConfig>(field: K, v: FleetConfig[K] | undefined): void => {
      if (v !== undefined) config[field] = v;
    };
    switch (key as ConfigKey) {
      case 'base':
      case 'setup':
      case 'notify':
        assign(key as 'base' | 'setup' | 'notify', r.text(key, value, keyNode));
        break;
      case 'check': {
        const read = checksFromNode(value, (at, problem) => r.error(at ?? keyNode, problem), keyNode);
        if (read !== undefined) {
          config.check = read.check;
          if (read.checks !== undefined) config.checks = read.checks;
        }
        break;
      }
      case 'prove': {
        const v = r.scalar(key, value, keyNode);
        if (typeof v === 'boolean') config.prove = v;
        else if (v !== undefined) r.error(keyNode, `prove must be true or false, got '${String(v)}'`);
        break;
      }
      case 'model': {
        const t = r.text(key, value, keyNode);
        if (t === null) r.error(keyNode, 'model needs a model name');
        else assign('model', t);
        break;
      }
      case 'concurrency':
        assign('concurrency', r.wholeNumber(key, value, keyNode, 1, false));
        break;
      case 'parallel': {
        const n = r.wholeNumber(key, value, keyNode, 1, false);
        if (n !== undefined && n > MAX_PARALLEL)
          r.error(keyNode, `parallel must be at most ${MAX_PARALLEL} (candidates per attempt round), got '${n}'`);
        else assign('parallel', n);
        break;
      }
      case 'review': {
        const v = r.scalar(key, value, keyNode);
        if (typeof v === 'boolean') config.review = v;
        else if (v !== undefined) r.error(keyNode, `review must be true or false, got '${String(v)}'`);
        break;
      }
      case 'gates':
        readGates(r, value, keyNode, config);
        break;
      case 'ports':
        assign('ports', readPorts(r, value, keyNode));
        break;
      case 'sandbox': {
        const v = r.scalar(key, value, keyNode);
        if (v === true || v === 'auto' || v === 'on') config.sandbox = 'auto';
        else if (v === false || v === 'off') config.sandbox = 'off';
        else if (v !== undefined) r.error(keyNode, `sandbox must be auto or off, got '${String(v)}'`);
        break;
      }
      case 'max_files':
        assign('maxFiles', r.wholeNumber(key, value, keyNode, 1, true));
        break;
      case 'max_lines':
        assign('maxLines', r.wholeNumber(key, value, keyNode, 1, true));
        break;
      case 'protect': {
        const extra = readProtect(r, value, keyNode);
        if (extra) config.protect = [...DEFAULT_PROTECT, ...extra];
        break;
      }
      case 'prices':
        assign('prices', readPrices(r, value, keyNode));
        break;
      case 'env':
        assign('env', readEnvNames(r, value, keyNode));
        break;
      case 'max_file_bytes':
        assign('maxFileBytes', r.wholeNumber(key, value, keyNode, 1, true));
        break;
      case 'max_bytes':
        assign('maxBytes', r.wholeNumber(key, value, keyNode, 1, true));
        break;
      case 'tests':
        assign('tests', readPatterns(r, key, value, keyNode));
        break;
      case 'network': {
        const hosts = readProtect(r, value, keyNode)?.map((h) => h.toLowerCase());
        const bad = hosts?.find((h) => !/^[a-z0-9.-]+(:\d{1,5})?$/.test(h));
        if (bad !== undefined) r.error(keyNode, `network must list host names (host or host:port), got '${bad}'`);
        else if (hosts !== undefined) config.network = hosts;
        break;
      }
      case 'check_timeout':
      case 'setup_timeout': {
        const v = r.limit(key, value, keyNode, parseDuration);
        if (v === null) r.error(keyNode, `${key} needs a duration, e.g. 10m`);
        else assign(key === 'check_timeout' ? 'checkTimeoutMs' : 'setupTimeoutMs', v);
        break;
      }
      case 'discovered': {
        const v = r.scalar(key, value, keyNode);
        if (v === 'run' || v === 'hold') config.discovered = v;
        else if (v !== undefined)
          r.error(
            keyNode,
            `discovered must be hold (proposals under ## Discovered wait for a person) or run, got '${String(v)}'`,
          );
        break;
      }
      case 'notify_on':
        assign('notifyOn', readNotifyOn(r, value, keyNode));
        break;
      case 'discover':
        assign('discover', readDiscover(r, value, keyNode));
        break;
      case 'land':
        assign('land', readLand(r, value, keyNode));
        break;
      case 'remote':
        assign('remote', readRemote(r, value, keyNode));
        break;
      case 'forge':
        assign('forge', readForge(r, value, keyNode));
        break;
      case 'pr':
        assign('pr', readPr(r, value, keyNode));
        break;
      case 'review_capacity':
        assign('reviewCapacity', readReviewCapacity(r, value, keyNode));
        break;
      case 'tracker':
        assign('tracker', readTracker(r, value, keyNode));
        break;
      case 'lessons': {
        const v = r.scalar(key, value, keyNode);
        if (v === true || v === 'on') config.lessons = true;
        else if (v === false || v === 'off') config.lessons = false;
        else if (v !== undefined) r.error(keyNode, `lessons must be on or off, got '${String(v)}'`);
        break;
      }
      case 'autonomy': {
        const v = r.scalar(key, value, keyNode);
        if ((AUTONOMY_LEVELS as readonly unknown[]).includes(v)) config.autonomy = v as Autonomy;
        else if (v !== undefined)
          r.error(keyNode, `autonomy must be ${AUTONOMY_LEVELS.join(', ')}, got '${String(v)}'`);
        break;
      }
    }
  }
  const size = config.ports.to - config.ports.from + 1;
  if (size < config.concurrency) {
    r.error(
      lines.ports ?? lines.concurrency,
      `ports ${config.ports.from}-${config.ports.to} give ${size} port(s), fewer than concurrency ${config.concurrency}`,
    );
  }
  return config;
}
