/**
 * A large BACKLOG.md's last parse, kept in `.loop-worktrees/backlog.parsed.json` so that a session whose
 * backlog has not changed reads it back instead of parsing 20,000 tasks again in a process whose parser
 * is still cold ({@link cachedParse}, {@link keepParse}).
 *
 * Invariants:
 * - an entry answers only for the very text it was parsed from, by the very parser: its key is a digest
 *   of the text, the file's path and loopfleet's backlog code; anything else (another text, an older
 *   loopfleet, a torn or foreign file) is no entry, and the text is parsed;
 * - only a parse without problems and with every task's id written in the file is kept, so an entry never
 *   hides a problem and never depends on ids chosen at read time (`takenIds`);
 * - it is written only under the fleet's lock (by {@link openSession}), atomically (a file of its own
 *   renamed over the old one), beside state.json and baselines.json, which agents cannot reach either.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BACKLOG_PARSE_FILE } from '../domain/layout.js';
import type { Backlog } from '../domain/types.js';

/** A smaller backlog parses in a few milliseconds: not worth a file. */
export const PARSE_CACHE_MIN_BYTES = 64 * 1024;
/** bumped when the entry's shape changes */
const FORMAT = 1;

/** The modules whose code decides a parse: a change to any of them is another parser. */
const PARSER_FOLDERS = ['../core/backlog/', '../core/text/', '../domain/'];

let parserDigest: Promise<string> | undefined;
function parserCode(): Promise<string> {
  parserDigest ??= (async () => {
    const hash = createHash('sha256');
    for (const folder of PARSER_FOLDERS) {
      const dir = fileURLToPath(new URL(folder, import.meta.url));
      for (const name of (await readdir(dir)).sort()) {
        if (!/\.(js|ts)$/.test(name)) continue;
        hash
          .update(`${folder}${name}\0`)
          .update(await readFile(join(dir, name)))
          .update('\0');
      }
    }
    return hash.digest('hex');
  })();
  return parserDigest;
}

async function keyOf(path: string, text: string): Promise<string> {
  return createHash('sha256')
    .update(JSON.stringify({ format: FORMAT, parser: await parserCode(), path }))
    .update('\0')
    .update(text)
    .digest('hex');
}

interface Entry {
  format: number;
  key: string;
  backlog: Pick<Backlog, 'config' | 'tasks'>;
}

/** The kept parse of `text` (the content of `path`), or null: none, another text's, another parser's. */
export async function cachedParse(workDir: string, path: string, text: string): Promise<Backlog | null> {
  if (text.length < PARSE_CACHE_MIN_BYTES) return null;
  let raw: string;
  try {
    raw = await readFile(join(workDir, BACKLOG_PARSE_FILE), 'utf8');
  } catch (error) {
    if (['ENOENT', 'ENOTDIR'].includes((error as NodeJS.ErrnoException).code ?? '')) return null;
    throw error;
  }
  let entry: Partial<Entry>;
  try {
    entry = JSON.parse(raw) as Partial<Entry>;
  } catch (error) {
    if (error instanceof SyntaxError) return null; // torn by a crash or foreign: parsed again and rewritten
    throw error;
  }
  if (entry?.format !== FORMAT || entry.key !== (await keyOf(path, text))) return null;
  const kept = entry.backlog;
  if (typeof kept?.config !== 'object' || !Array.isArray(kept.tasks)) return null;
  return { path, config: kept.config, tasks: kept.tasks };
}

/** Keeps `backlog`, the complete parse of `text`, for the next session (a small backlog is not kept). */
export async function keepParse(workDir: string, text: string, backlog: Backlog): Promise<void> {
  if (text.length < PARSE_CACHE_MIN_BYTES) return;
  const entry: Entry = {
    format: FORMAT,
    key: await keyOf(backlog.path, text),
    backlog: { config: backlog.config, tasks: backlog.tasks },
  };
  const file = join(workDir, BACKLOG_PARSE_FILE);
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    await writeFile(temp, JSON.stringify(entry), { flag: 'wx', mode: 0o600 });
    await rename(temp, file);
  } finally {
    await rm(temp, { force: true });
  }
}
