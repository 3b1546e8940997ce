/**
 * The import boundaries of src/ are enforced by `npm run lint` (`biome ci`, biome.json), which `npm test` runs
 * before vitest. These tests check that biome.json states the layering of {@link CORE_PARTS} and
 * {@link ADAPTER_PARTS}, then run the same linter on the real tree and on a copy with deliberate violations:
 * one per rule, each reported at its file and line with its rule's message, and nothing else.
 */
import { appendFile, cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/paths.js';
import { ADAPTER_PARTS, ADAPTERS_MAY_IMPORT_CORE, above, CORE_PARTS, forbidden, type Part } from './parts.js';

const BIOME = join(ROOT, 'node_modules', '.bin', 'biome');

function lint(cwd: string) {
  return execa(BIOME, ['lint', '--reporter=concise', '--max-diagnostics=none', '--colors=off'], {
    cwd,
    reject: false,
    all: true,
  });
}

interface Pattern {
  group: string[];
  message: string;
}
interface RestrictedImports {
  paths?: Record<string, string>;
  patterns?: Pattern[];
}
interface Override {
  includes: string[];
  linter?: { rules?: Record<string, Record<string, { level: string; options?: Record<string, unknown> }>> };
}

async function biomeConfig(): Promise<{ overrides: Override[] }> {
  return JSON.parse(await readFile(join(ROOT, 'biome.json'), 'utf8')) as { overrides: Override[] };
}

function restrictedImports(override: Override | undefined): RestrictedImports | undefined {
  return override?.linter?.rules?.['style']?.['noRestrictedImports']?.options as RestrictedImports | undefined;
}

/** The group of a part's own pattern: the parts it may not import, one folder segment anywhere in a relative path. */
function partGroup(names: readonly string[]): string[] {
  const alternatives = names.length === 1 ? names[0]! : `{${names.join(',')}}`;
  return [`../**/${alternatives}`, `../**/${alternatives}/**`];
}

const ROOMS: Array<{ room: 'core' | 'adapters'; parts: readonly Part[] }> = [
  { room: 'core', parts: CORE_PARTS },
  { room: 'adapters', parts: ADAPTER_PARTS },
];

describe('the import-boundary lint', () => {
  it('passes on the real tree (and npm test runs it and the typecheck before vitest)', async () => {
    const result = await lint(ROOT);
    expect(result.all).not.toMatch(/noRestrictedImports|noImportCycles/);
    expect(result.exitCode, result.all).toBe(0);
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts['lint']).toBe('biome ci');
    expect(pkg.scripts['typecheck']).toBe('tsc -p tsconfig.json --noEmit');
    const steps = (pkg.scripts['test'] ?? '').split('&&').map((step) => step.trim());
    expect(steps.indexOf('npm run lint')).toBeGreaterThanOrEqual(0);
    expect(steps.indexOf('npm run typecheck')).toBeGreaterThan(steps.indexOf('npm run lint'));
    expect(steps.indexOf('vitest run')).toBeGreaterThan(steps.indexOf('npm run typecheck'));
  });

  describe('biome.json states the layering of the parts', () => {
    for (const { room, parts } of ROOMS) {
      it(`has a part for every folder of src/${room}`, async () => {
        const folders = (await readdir(join(ROOT, 'src', room), { withFileTypes: true }))
          .filter((entry) => entry.isDirectory())
          .map((entry) => entry.name)
          .sort();
        expect(folders).toEqual(parts.map((p) => p.name).sort());
      });

      it(`lists the parts of src/${room} bottom to top, each importing only parts listed before it`, () => {
        parts.forEach((part, i) => {
          const earlier = parts.slice(0, i).map((p) => p.name);
          for (const name of part.imports) expect(earlier, `${room}/${part.name} imports ${name}`).toContain(name);
        });
      });

      for (const part of parts) {
        it(`${room}/${part.name}: forbids exactly the parts it may not import, keeping the rules of src/${room}`, async () => {
          const { overrides } = await biomeConfig();
          const base = restrictedImports(overrides.find((o) => o.includes.join() === `src/${room}/**`));
          expect(base, `an override for src/${room}/**`).toBeDefined();
          const own = overrides.filter((o) => o.includes.join() === `src/${room}/${part.name}/**`);
          const options = own.length === 0 ? base : restrictedImports(own[0]);
          expect(own.length).toBeLessThanOrEqual(1);
          // Biome takes a rule's options from the last override that matches a file, whole: each part's
          // override restates the rules of its room, then adds its own pattern.
          expect(options?.paths).toEqual(base?.paths);
          const names = forbidden(parts, part);
          const expected = names.length === 0 ? [] : [partGroup(names)];
          const patterns = options?.patterns ?? [];
          expect(patterns.slice(0, base?.patterns?.length ?? 0)).toEqual(base?.patterns ?? []);
          const added = patterns.slice(base?.patterns?.length ?? 0);
          expect(added.map((p) => p.group)).toEqual(expected);
          for (const pattern of added) {
            expect(pattern.message).toMatch(new RegExp(`^${room}/${part.name} imports `));
            for (const up of above(parts, part)) expect(pattern.message).toContain(up);
          }
        });
      }
    }

    it('lets an adapter import of the engine only the parts ADAPTERS_MAY_IMPORT_CORE names', async () => {
      const { overrides } = await biomeConfig();
      const base = restrictedImports(overrides.find((o) => o.includes.join() === 'src/adapters/**'));
      expect(base?.patterns?.[0]?.group).toEqual([
        '../**/core',
        '../**/core/**',
        ...ADAPTERS_MAY_IMPORT_CORE.map((part) => `!../**/core/${part}/**`),
      ]);
    });

    it('reports the import circles of src/, type imports included', async () => {
      const { overrides } = await biomeConfig();
      const cycles = overrides.filter((o) => o.linter?.rules?.['suspicious']?.['noImportCycles'] !== undefined);
      expect(cycles.map((o) => o.includes)).toEqual([['src/**']]);
      expect(cycles[0]?.linter?.rules?.['suspicious']?.['noImportCycles']).toEqual({
        level: 'error',
        options: { ignoreTypes: false },
      });
    });
  });

  describe('on a copy with one violation per rule', () => {
    let dir: string;
    /**
     * A planted file in every folder a violation names, importing nothing: a forbidden import then cannot
     * also close a circle, and the only circle in the copy is {@link CIRCLE}.
     */
    const LEAF = 'planted-leaf';
    const LEAF_FOLDERS = ['ui', 'web', 'commands', 'demo', 'ports', 'domain'];
    // file (relative to the copy), the line appended to it, and the rule's message
    const violations: Array<[string, string, string]> = [
      [
        'src/core/text/format-units.ts',
        "import type { AppProps } from '../../ui/planted-leaf.js';",
        'src/core never imports src/ui',
      ],
      [
        'src/core/backlog/parse.ts',
        "export { SimpleGitAdapter } from '../../adapters/git/planted-leaf.js';",
        'src/core never imports src/adapters',
      ],
      [
        'src/core/report/morning-report.ts',
        "const commands = await import('../../commands/planted-leaf.js');",
        'src/core never imports src/commands',
      ],
      [
        'src/core/roles/prompts.ts',
        "import { startModelServer } from '../../demo/planted-leaf.js';",
        'src/core never imports src/demo',
      ],
      ['src/core/guard/diff-guard.ts', "import { Box } from 'ink';", 'src/core never imports ink'],
      ['src/core/verify/verdict.ts', "import { jsx } from 'react/jsx-runtime';", 'src/core never imports ink or react'],
      [
        'src/core/budget/pricing.ts',
        "import { readFile } from 'node:fs/promises';",
        'src/core reaches the file system only through a port',
      ],
      [
        'src/core/land/pr/keep.ts',
        "import { theme } from '../../../ui/planted-leaf.js';",
        'src/core never imports src/ui',
      ],
      [
        'src/core/fleet/prune.ts',
        "import { FsWorkspace } from '../../adapters/workspace/planted-leaf.js';",
        'src/core never imports src/adapters',
      ],
      ['src/core/task/state.ts', "import { execa } from 'execa';", 'processes run only through src/adapters'],
      [
        'src/core/fleet/handle.ts',
        "import type { WebServer } from '../../web/planted-leaf.js';",
        'src/core never imports src/web',
      ],
      ['src/web/server/guard.ts', "import { theme } from '../../ui/planted-leaf.js';", 'src/web never imports src/ui'],
      [
        'src/web/server/clean.ts',
        "import { FsWorkspace } from '../../adapters/workspace/planted-leaf.js';",
        'src/web never imports src/adapters',
      ],
      [
        'src/web/server/token.ts',
        "const serve = await import('../../commands/planted-leaf.js');",
        'src/web never imports src/commands',
      ],
      ['src/web/server/timeline.ts', "import { readFile } from 'node:fs/promises';", 'src/web reads no file'],
      ['src/ui/theme.ts', "import { leaf } from '../web/planted-leaf.js';", 'src/ui never imports src/web'],
      [
        'src/adapters/queue/redis-url.ts',
        "import { leaf } from '../../web/planted-leaf.js';",
        'an adapter never imports src/ui, src/web, src/commands or src/demo',
      ],
      [
        'src/ui/format.ts',
        "import { FsWorkspace } from '../adapters/workspace/planted-leaf.js';",
        'src/ui never imports src/adapters',
      ],
      [
        'src/ports/clock.ts',
        "import type { FleetState } from '../core/task/planted-leaf.js';",
        'src/ports imports only src/domain',
      ],
      ['src/domain/layout.ts', "import type { GitPort } from '../ports/planted-leaf.js';", 'src/domain is the leaf'],
      ['src/commands/repo.ts', "import { execa } from 'execa';", 'processes run only through src/adapters'],
      ['src/commands/init.ts', "import { simpleGit } from 'simple-git';", 'git runs only through the git port'],
      [
        'src/adapters/forge/open.ts',
        "import { Fleet } from '../../core/fleet/planted-leaf.js';",
        'an adapter imports only core/text of the engine',
      ],
      [
        'src/adapters/model/agent-presets/launch.ts',
        "import type { Theme } from '../../../ui/planted-leaf.js';",
        'an adapter never imports src/ui, src/web, src/commands or src/demo',
      ],
      [
        'src/adapters/store/file-store.ts',
        "const status = await import('../../commands/planted-leaf.js');",
        'an adapter never imports src/ui, src/web, src/commands or src/demo',
      ],
    ];
    /** the circle planted in src/core/text, one of its imports type-only */
    const CIRCLE = ['src/core/text/circle-a.ts', 'src/core/text/circle-b.ts'];
    /** line numbers of the appended violations, by index in `violations` */
    const lines: number[] = [];

    /** The import that climbs from `part`: the first part it may not import that is listed after it, else the first. */
    function climb(parts: readonly Part[], part: Part): string | undefined {
      const names = forbidden(parts, part);
      const after = parts.slice(parts.indexOf(part) + 1).map((p) => p.name);
      return names.find((name) => after.includes(name)) ?? names[0];
    }

    /** The file of a part that takes its violation: the first in its folder, or in the deepest subfolder there is. */
    async function fileOf(room: string, part: string): Promise<string> {
      const deeper: Record<string, string> = { 'core/land': 'land/pr', 'adapters/model': 'model/agent-presets' };
      const folder = deeper[`${room}/${part}`] ?? part;
      const names = (await readdir(join(ROOT, 'src', room, folder))).filter((n) => n.endsWith('.ts')).sort();
      return `src/${room}/${folder}/${names[0]}`;
    }

    // The ways an import is written, taken in turn: each must be caught.
    const FORMS = [
      (spec: string) => `import '${spec}';`,
      (spec: string, i: number) => `import type { Leaf as Leaf${i} } from '${spec}';`,
      (spec: string, i: number) => `export { leaf as leaf${i} } from '${spec}';`,
      (spec: string, i: number) => `const leaf${i} = await import('${spec}');`,
    ];

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'loopfleet-boundaries-'));
      await cp(join(ROOT, 'src'), join(dir, 'src'), { recursive: true });
      await cp(join(ROOT, 'biome.json'), join(dir, 'biome.json'));
      const folders = [...LEAF_FOLDERS, ...ROOMS.flatMap(({ room, parts }) => parts.map((p) => `${room}/${p.name}`))];
      for (const folder of folders) {
        await writeFile(join(dir, 'src', folder, `${LEAF}.ts`), 'export const leaf = 0;\nexport type Leaf = number;\n');
      }
      let form = 0;
      for (const { room, parts } of ROOMS) {
        for (const part of parts) {
          const target = climb(parts, part);
          if (target === undefined) continue;
          const file = await fileOf(room, part.name);
          const depth = file.split('/').length - 3; // folders below src/<room>
          const spec = `${'../'.repeat(depth)}${target}/${LEAF}.js`;
          const line = FORMS[form % FORMS.length]!(spec, form);
          form++;
          violations.push([file, line, `${room}/${part.name} imports `]);
        }
      }
      for (const [file, line] of violations) {
        const before = await readFile(join(dir, file), 'utf8');
        lines.push(before.split('\n').length + 1);
        await appendFile(join(dir, file), `\n${line}\n`);
      }
      await writeFile(join(dir, CIRCLE[0]!), "import { b } from './circle-b.js';\nexport const a = b;\n");
      await writeFile(
        join(dir, CIRCLE[1]!),
        "import type { a } from './circle-a.js';\nexport const b: typeof a = 1;\n",
      );
      // Allowed: each must not be reported.
      const allowed: Array<[string, string]> = [
        [
          'src/ports/clock.ts',
          "import type { Usage } from '../domain/types.js';\nimport type { GitPort } from './git.js';",
        ],
        ['src/ui/allowed.ts', "import type { FleetHandle } from '../core/fleet/handle.js';"],
        [
          'src/web/server/allowed.ts',
          "import type { FleetHandle } from '../../core/fleet/handle.js';\nimport { statusRow } from '../../core/report/status-row.js';\nimport { visible } from '../../domain/sanitize.js';",
        ],
        ['src/core/attempt/pipeline.ts', "import { leaf as verifyLeaf } from '../verify/planted-leaf.js';"],
        ['src/core/roles/marker.ts', "import type { Leaf } from '../verify/planted-leaf.js';"],
        ['src/core/telemetry/metrics-allowed.ts', "import { leaf } from '../report/planted-leaf.js';"],
        [
          'src/core/land/pr/body.ts',
          "import { leaf as landLeaf } from '../planted-leaf.js';\nimport { leaf as textLeaf } from '../../text/planted-leaf.js';",
        ],
        ['src/core/fleet/fleet.ts', "import * as prBody from '../land/pr/body.js';"],
        ['src/adapters/model/cli-agent.ts', "import { leaf as sandboxLeaf } from '../sandbox/planted-leaf.js';"],
        [
          'src/adapters/model/agent-presets/codex.ts',
          "import { leaf as sandboxLeaf } from '../../sandbox/planted-leaf.js';",
        ],
        ['src/adapters/workspace/fs-workspace.ts', "import { leaf as gitLeaf } from '../git/planted-leaf.js';"],
        ['src/adapters/git/commit.ts', "import { formatBytes } from '../../core/text/format-units.js';"],
      ];
      for (const [file, text] of allowed) await appendFile(join(dir, file), `\n${text}\n`);
    });
    afterAll(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it('fails, naming every violating import at its line and only those, and the planted circle', async () => {
      const result = await lint(dir);
      expect(result.exitCode).not.toBe(0);
      // concise reporter: `× <file>:<line>:<col>: lint/style/noRestrictedImports: <message>`
      const reported = result.all.split('\n').filter((line) => line.includes('noRestrictedImports'));
      violations.forEach(([file, , message], i) => {
        const at = ` ${file}:${lines[i]}:`;
        expect(
          reported.some((line) => line.includes(at) && line.includes(message)),
          `${file}:${lines[i]}: ${message}\n${reported.join('\n')}`,
        ).toBe(true);
      });
      expect(reported, reported.join('\n')).toHaveLength(violations.length);
      const circles = result.all.split('\n').filter((line) => line.includes('noImportCycles'));
      expect(circles.map((line) => /× (\S+?):/.exec(line)?.[1]).sort()).toEqual(CIRCLE);
    });
  });
});
