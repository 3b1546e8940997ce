/**
 * Typed reading of front matter values, each problem reported at the line of its key. The readers return
 * undefined after reporting a problem, so that the caller keeps the default.
 */
import { isMap, isScalar, isSeq, type Node } from 'yaml';
import { InputError } from '../../domain/errors.js';
import type { ModelPrice } from '../../domain/types.js';
import { parseSize, parseUsd, type Parsed } from '../text/parse-units.js';
import { didYouMean } from './closest.js';

export const PRICE_KEYS = ['input', 'output', 'cache_write_5m', 'cache_write_1h', 'cache_read'] as const;
type PriceKey = (typeof PRICE_KEYS)[number];

/** Words that switch a limit off. */
const NO_LIMIT = new Set(['none', 'off', 'unlimited']);

type Value = string | number | boolean | null;

export class Reader {
  constructor(
    private readonly file: string,
    private readonly errors: InputError[],
    readonly lineOf: (node: Node | null | undefined) => number,
  ) {}

  error(at: Node | null | undefined, problem: string): void {
    this.errors.push(new InputError(this.file, this.lineOf(at), problem));
  }

  /** The scalar value of `node`; undefined (and an error) for a list or a mapping. */
  scalar(name: string, node: Node | null, at: Node): Value | undefined {
    if (node === null || node === undefined) return null;
    if (isScalar(node)) {
      const v = node.value;
      if (v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
      return String(node.source ?? v);
    }
    this.error(at, `${name} must be a single value, not a ${isSeq(node) ? 'list' : 'mapping'}`);
    return undefined;
  }

  /** Text as written (so `base: 2024` is the branch "2024"); empty → null. */
  text(name: string, node: Node | null, at: Node): string | null | undefined {
    const v = this.scalar(name, node, at);
    if (v === undefined || v === null) return v;
    const t = typeof v === 'string' ? v.trim() : String(isScalar(node) ? (node.source ?? v) : v);
    return t === '' ? null : t;
  }

  wholeNumber(name: string, node: Node | null, at: Node, min: number, sizes: boolean): number | undefined {
    const v = this.scalar(name, node, at);
    if (v === undefined) return undefined;
    if (v === null) return this.fail(at, `${name} needs a value`);
    let n = NaN;
    if (typeof v === 'number') n = v;
    else if (typeof v === 'string' && sizes) {
      const p = parseSize(v);
      if (p.ok) n = p.value;
    } else if (typeof v === 'string' && /^\s*-?\d+\s*$/.test(v)) n = Number(v);
    if (!Number.isInteger(n) || n < min) {
      return this.fail(at, `${name} must be a whole number of at least ${min}, got '${String(v)}'`);
    }
    return n;
  }

  /** A limit: null/`none` → no limit; otherwise parsed and greater than zero. */
  limit(
    name: string,
    node: Node | null,
    at: Node,
    parse: (v: string | number) => Parsed<number>,
  ): number | null | undefined {
    const v = this.scalar(name, node, at);
    if (v === undefined) return undefined;
    if (v === null || (typeof v === 'string' && NO_LIMIT.has(v.trim().toLowerCase()))) return null;
    if (typeof v === 'boolean') return this.fail(at, `${name} must be a value or 'none', got '${String(v)}'`);
    const p = parse(v);
    if (!p.ok) return this.fail(at, `${name}: ${p.message}`);
    if (p.value <= 0) return this.fail(at, `${name} must be greater than zero (write 'none' for no limit)`);
    return p.value;
  }

  fail(at: Node | null | undefined, problem: string): undefined {
    this.error(at, problem);
    return undefined;
  }
}

export function readPorts(r: Reader, node: Node | null, at: Node): { from: number; to: number } | undefined {
  const v = r.scalar('ports', node, at);
  if (v === undefined) return undefined;
  const m = typeof v === 'number' ? [String(v), String(v), String(v)] : /^\s*(\d+)\s*-\s*(\d+)\s*$/.exec(String(v));
  if (!m) return r.fail(at, `ports must be a range like 4100-4199, got '${String(v)}'`);
  const from = Number(m[1]);
  const to = Number(m[2]);
  if (from < 1 || to > 65535 || !Number.isInteger(from) || !Number.isInteger(to)) {
    return r.fail(at, `ports ${from}-${to} are outside 1-65535`);
  }
  if (from > to) return r.fail(at, `ports ${from}-${to} are reversed: write the lower port first (${to}-${from})`);
  return { from, to };
}

export function readProtect(
  r: Reader,
  node: Node | null,
  at: Node,
  problem = 'protect must be a list of path patterns, e.g. - secrets/**',
): string[] | undefined {
  if (node === null || (isScalar(node) && node.value === null)) return [];
  const items = isSeq(node) ? (node.items as Node[]) : [node];
  const patterns: string[] = [];
  for (const item of items) {
    if (!isScalar(item) || typeof item.value !== 'string' || item.value.trim() === '') {
      r.error(item ?? at, problem);
      continue;
    }
    patterns.push(item.value.trim());
  }
  return patterns;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `env:` — names of host variables passed to setup, checks and agents; names only, never values. */
export function readEnvNames(r: Reader, node: Node | null, at: Node): string[] | undefined {
  if (node === null || (isScalar(node) && node.value === null)) return [];
  if (!isSeq(node)) return r.fail(at, 'env must be a list of variable names, e.g. env: [DATABASE_URL]');
  const names: string[] = [];
  for (const item of node.items as Node[]) {
    const name = isScalar(item) && typeof item.value === 'string' ? item.value.trim() : null;
    if (name === null || !ENV_NAME.test(name)) {
      r.error(
        item ?? at,
        `env lists variable names (letters, digits, _), got '${isScalar(item) ? String(item.value) : 'a mapping'}'`,
      );
      continue;
    }
    if (!names.includes(name)) names.push(name);
  }
  return names;
}

export function readPrices(r: Reader, node: Node | null, at: Node): Record<string, ModelPrice> | undefined {
  if (node === null || (isScalar(node) && node.value === null)) return {};
  if (!isMap(node)) return r.fail(at, 'prices must be a mapping of model name to prices per million tokens');
  const prices: Record<string, ModelPrice> = {};
  for (const pair of node.items) {
    const modelNode = pair.key as Node;
    const model = isScalar(modelNode) ? String(modelNode.value) : '?';
    const value = (pair.value ?? null) as Node | null;
    if (!isMap(value)) {
      r.error(modelNode, `prices.${model} must be a mapping with input and output (US dollars per million tokens)`);
      continue;
    }
    const got: Partial<Record<PriceKey, number>> = {};
    for (const p of value.items) {
      const keyNode = p.key as Node;
      const key = isScalar(keyNode) ? String(keyNode.value) : '?';
      if (!(PRICE_KEYS as readonly string[]).includes(key)) {
        r.error(
          keyNode,
          `unknown price '${key}' for ${model}${didYouMean(key, PRICE_KEYS)}; known: ${PRICE_KEYS.join(', ')}`,
        );
        continue;
      }
      const v = r.scalar(`prices.${model}.${key}`, (p.value ?? null) as Node | null, keyNode);
      if (v === undefined) continue;
      const parsed = v === null || typeof v === 'boolean' ? null : parseUsd(v);
      if (!parsed?.ok) {
        r.error(keyNode, `prices.${model}.${key} must be US dollars per million tokens, got '${String(v)}'`);
        continue;
      }
      got[key as PriceKey] = parsed.value;
    }
    if (got.input === undefined || got.output === undefined) {
      r.error(modelNode, `prices.${model} needs both input and output`);
      continue;
    }
    // Unset cache prices follow the usual ratios to the input price.
    prices[model] = {
      input: got.input,
      output: got.output,
      cacheWrite5m: got.cache_write_5m ?? got.input * 1.25,
      cacheWrite1h: got.cache_write_1h ?? got.input * 2,
      cacheRead: got.cache_read ?? got.input * 0.1,
    };
  }
  return prices;
}
