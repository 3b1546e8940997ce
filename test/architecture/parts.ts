/**
 * The parts of the engine (`src/core`) and of the adapters (`src/adapters`), each listed bottom to top with
 * the parts it may import. This is the one statement of the layering: biome.json's per-part
 * `noRestrictedImports` overrides must forbid exactly the parts a part may not import (the boundary test
 * compares them), and the real import graph must hold to it (the circle test walks it).
 *
 * Every part may import `src/domain` and `src/ports`; a part's own folder (with its subfolders, such as
 * `land/pr`) is one part.
 */

export interface Part {
  /** the folder under `src/core` or `src/adapters` */
  name: string;
  /** the parts of the same room it may import; each is listed before it */
  imports: readonly string[];
}

const core: Part[] = [];
/** One row of the table; "everything below" is every part listed before it. */
const coreRow = (name: string, imports: readonly string[] | 'everything below') =>
  core.push({ name, imports: imports === 'everything below' ? core.map((p) => p.name) : imports });
coreRow('text', []);
coreRow('guard', ['text']);
coreRow('budget', ['text']);
coreRow('backlog', ['text']);
coreRow('verify', ['text', 'guard']);
coreRow('roles', ['text', 'backlog', 'verify']);
coreRow('discover', ['text', 'backlog']);
coreRow('attempt', 'everything below');
coreRow('executor', 'everything below');
coreRow('task', 'everything below');
coreRow('report', 'everything below');
coreRow('telemetry', 'everything below');
coreRow('land', 'everything below');
coreRow('tracker', 'everything below');
coreRow('fleet', 'everything below');

/** `src/core`, bottom to top (LAYOUT.md's table) */
export const CORE_PARTS: readonly Part[] = core;

/**
 * `src/adapters`, bottom to top: fs < git < workspace, sandbox (egress below sandbox) < model; forge uses
 * git; tracker uses forge; store, queue and telemetry stand apart and import no other adapter part.
 */
export const ADAPTER_PARTS: readonly Part[] = [
  { name: 'fs', imports: [] },
  { name: 'egress', imports: ['fs'] },
  { name: 'git', imports: ['fs'] },
  { name: 'workspace', imports: ['fs', 'git'] },
  { name: 'sandbox', imports: ['fs', 'egress', 'git'] },
  { name: 'model', imports: ['fs', 'egress', 'git', 'workspace', 'sandbox'] },
  { name: 'forge', imports: ['fs', 'git'] },
  { name: 'tracker', imports: ['fs', 'git', 'forge'] },
  { name: 'store', imports: [] },
  { name: 'queue', imports: [] },
  { name: 'telemetry', imports: [] },
];

/** The only part of the engine an adapter may import: pure formatting (`formatBytes`). */
export const ADAPTERS_MAY_IMPORT_CORE: readonly string[] = ['text'];

/** The parts of `parts` that `part` may not import: every other part not in its list. */
export function forbidden(parts: readonly Part[], part: Part): string[] {
  return parts.filter((p) => p.name !== part.name && !part.imports.includes(p.name)).map((p) => p.name);
}

/** The parts that import `part`, directly or through others: the ones it sits below. */
export function above(parts: readonly Part[], part: Part): string[] {
  const out = new Set<string>();
  let grew = true;
  while (grew) {
    grew = false;
    for (const p of parts) {
      if (out.has(p.name)) continue;
      if (p.imports.includes(part.name) || p.imports.some((i) => out.has(i))) {
        out.add(p.name);
        grew = true;
      }
    }
  }
  return parts.filter((p) => out.has(p.name)).map((p) => p.name);
}

/** The room (`core` or `adapters`) and part of a file under `src/`, or null for a file outside both. */
export function partOf(file: string): { room: 'core' | 'adapters'; part: string } | null {
  const match = /^src\/(core|adapters)\/([^/]+)\//.exec(file);
  return match === null ? null : { room: match[1] as 'core' | 'adapters', part: match[2]! };
}
