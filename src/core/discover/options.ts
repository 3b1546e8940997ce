import { DISCOVER_SOURCES, type DiscoverSource } from '../../domain/types.js';

/** `--only todo,tests`: the finders to run; every finder when not given. */
export function parseOnly(text: string): { ok: true; value: Set<DiscoverSource> } | { ok: false; message: string } {
  const names = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const unknown = names.filter((n) => !(DISCOVER_SOURCES as readonly string[]).includes(n));
  if (names.length === 0) return { ok: false, message: `name at least one of ${DISCOVER_SOURCES.join(', ')}` };
  if (unknown.length > 0)
    return { ok: false, message: `unknown finder '${unknown.join("', '")}'; known: ${DISCOVER_SOURCES.join(', ')}` };
  return { ok: true, value: new Set(names as DiscoverSource[]) };
}
