import { createHash } from 'node:crypto';
import type { ApiBlock, RequestBody } from './script-types.js';

/**
 * Deterministic token counts and a faithful simulation of prompt caching.
 *
 * Tokens: every cacheable block (each tool definition, each system block, each message content block)
 * counts ceil(chars / 4) of its text, where the text is the block's JSON without `cache_control`.
 *
 * Caching, as the Messages API documents it: the request is the sequence tools → system → messages.
 * A `cache_control` on a block is a breakpoint; the top-level `cache_control` is a breakpoint on the last
 * cacheable block. The prefix up to each breakpoint is written to the cache (with its TTL). On a later
 * request, the longest prefix already in the cache whose end lies at most LOOKBACK blocks before one of
 * the request's breakpoints is read; the tokens from there to the last breakpoint are written; the rest is
 * plain input. Invariant: input + cacheWrite + cacheRead = the request's total input tokens.
 */

const LOOKBACK = 20;
const TTL_MS = { '5m': 5 * 60_000, '1h': 60 * 60_000 } as const;

export interface InputUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
}

interface Block {
  key: string;
  tokens: number;
  ttl: keyof typeof TTL_MS | null;
}

export function tokensOf(text: string): number {
  return Math.ceil(text.length / 4);
}

function withoutCacheControl(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const { cache_control: _omitted, ...rest } = value as Record<string, unknown>;
  return rest;
}

function ttlOf(value: unknown): Block['ttl'] {
  if (typeof value !== 'object' || value === null) return null;
  const control = (value as { cache_control?: { ttl?: string } | null }).cache_control;
  if (control === undefined || control === null) return null;
  return control.ttl === '1h' ? '1h' : '5m';
}

function block(section: string, value: unknown): Block {
  const json = JSON.stringify(withoutCacheControl(value));
  return { key: `${section}:${json}`, tokens: tokensOf(json), ttl: ttlOf(value) };
}

/** The request's cacheable blocks in cache order. */
export function blocksOf(body: RequestBody): Block[] {
  const blocks: Block[] = [];
  for (const tool of (body.tools as unknown[] | undefined) ?? []) blocks.push(block('tool', tool));
  const system = body.system;
  if (typeof system === 'string') blocks.push(block('system', { type: 'text', text: system }));
  else if (Array.isArray(system)) for (const b of system) blocks.push(block('system', b));
  for (const message of body.messages) {
    const content: ApiBlock[] =
      typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
    for (const b of content) blocks.push(block(message.role, b));
  }
  const top = ttlOf(body);
  const last = blocks.at(-1);
  if (top !== null && last !== undefined && last.ttl === null) last.ttl = top;
  return blocks;
}

export interface CacheSimOptions {
  now?: () => number;
  /** prefixes shorter than this are neither written nor read (the API's minimum cacheable length) */
  minCacheableTokens?: number;
}

export class CacheSim {
  /** prefix hash → expiry (ms since the epoch) */
  readonly #entries = new Map<string, number>();
  readonly #now: () => number;
  readonly #min: number;

  constructor(options: CacheSimOptions = {}) {
    this.#now = options.now ?? Date.now;
    this.#min = options.minCacheableTokens ?? 0;
  }

  /** Accounts the request's input tokens and updates the cache as the API would. */
  account(body: RequestBody): InputUsage {
    const blocks = blocksOf(body);
    const now = this.#now();
    const hashes: string[] = [];
    const prefixTokens: number[] = [];
    let hash = createHash('sha256').update(`model:${body.model}`).digest('hex');
    let sum = 0;
    for (const b of blocks) {
      hash = createHash('sha256').update(hash).update('\n').update(b.key).digest('hex');
      sum += b.tokens;
      hashes.push(hash);
      prefixTokens.push(sum);
    }
    const total = sum;
    const breakpoints = blocks.flatMap((b, i) => (b.ttl !== null && prefixTokens[i]! >= this.#min ? [i] : []));

    let readEnd = -1;
    for (const bp of breakpoints) {
      for (let i = bp; i >= Math.max(0, bp - LOOKBACK); i--) {
        const expiry = this.#entries.get(hashes[i]!);
        if (expiry !== undefined && expiry > now) {
          readEnd = Math.max(readEnd, i);
          break;
        }
      }
    }
    const read = readEnd >= 0 ? prefixTokens[readEnd]! : 0;
    if (readEnd >= 0) {
      const ttl = blocks[readEnd]!.ttl ?? '5m';
      this.#entries.set(hashes[readEnd]!, Math.max(this.#entries.get(hashes[readEnd]!)!, now + TTL_MS[ttl]));
    }

    const creation = { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 };
    let written = read;
    for (const bp of breakpoints) {
      if (bp <= readEnd) continue;
      const ttl = blocks[bp]!.ttl!;
      const segment = prefixTokens[bp]! - written;
      written = prefixTokens[bp]!;
      if (ttl === '1h') creation.ephemeral_1h_input_tokens += segment;
      else creation.ephemeral_5m_input_tokens += segment;
      this.#entries.set(hashes[bp]!, now + TTL_MS[ttl]);
    }
    const cacheWrite = written - read;
    return {
      input_tokens: total - written,
      cache_creation_input_tokens: cacheWrite,
      cache_read_input_tokens: read,
      cache_creation: creation,
    };
  }

  clear(): void {
    this.#entries.clear();
  }
}
