/**
 * The import boundaries of src/ are enforced by `npm run lint` (Biome, biome.json), which `npm test` runs
 * before vitest. These tests run the same linter on the real tree and on a copy with deliberate violations.
 */
import { appendFile, cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/paths.js';

const BIOME = join(ROOT, 'node_modules', '.bin', 'biome');

function lint(cwd: string) {
  return execa(BIOME, ['lint', '--reporter=concise', '--max-diagnostics=none', '--colors=off'], {
    cwd,
    reject: false,
    all: true,
  });
}

describe('the import-boundary lint', () => {
  it('passes on the real tree (and npm test runs it before vitest)', async () => {
    const result = await lint(ROOT);
    expect(result.all).not.toMatch(/noRestrictedImports/);
    expect(result.exitCode).toBe(0);
    const pkg = (await import(join(ROOT, 'package.json'), { with: { type: 'json' } })).default as {
      scripts: Record<string, string>;
    };
    expect(pkg.scripts.test).toMatch(/npm run lint && vitest run/);
    expect(pkg.scripts.lint).toBe('biome lint');
  });

  describe('on a copy with one violation per rule', () => {
    let dir: string;
    // file (relative to the copy), the line appended to it, and the rule's message
    const violations: Array<[string, string, string]> = [
      ['src/core/units.ts', "import type { AppProps } from '../ui/app.js';", 'src/core never imports src/ui'],
      [
        'src/core/backlog/parse.ts',
        "export { SimpleGitAdapter } from '../../adapters/simple-git.js';",
        'src/core never imports src/adapters',
      ],
      [
        'src/core/report.ts',
        "const commands = await import('../commands/repo.js');",
        'src/core never imports src/commands',
      ],
      [
        'src/core/prompts.ts',
        "import { startModelServer } from '../demo/model-server.js';",
        'src/core never imports src/demo',
      ],
      ['src/core/guard.ts', "import { Box } from 'ink';", 'src/core never imports ink'],
      ['src/core/verdict.ts', "import { jsx } from 'react/jsx-runtime';", 'src/core never imports ink or react'],
      [
        'src/core/pricing.ts',
        "import { readFile } from 'node:fs/promises';",
        'src/core reaches the file system only through a port',
      ],
      [
        'src/ui/format.ts',
        "import { FsWorkspace } from '../adapters/fs-workspace.js';",
        'src/ui never imports src/adapters',
      ],
      [
        'src/ports/clock.ts',
        "import type { FleetState } from '../core/state.js';",
        'src/ports imports only src/domain',
      ],
      ['src/domain/layout.ts', "import type { GitPort } from '../ports/git.js';", 'src/domain is the leaf'],
      ['src/commands/repo.ts', "import { execa } from 'execa';", 'processes run only through src/adapters'],
      ['src/commands/init.ts', "import { simpleGit } from 'simple-git';", 'git runs only through the git port'],
    ];

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'loopfleet-boundaries-'));
      await cp(join(ROOT, 'src'), join(dir, 'src'), { recursive: true });
      await cp(join(ROOT, 'biome.json'), join(dir, 'biome.json'));
      for (const [file, line] of violations) await appendFile(join(dir, file), `\n${line}\n`);
      // Allowed: a port importing the domain and a sibling port, ui importing core's event types.
      await appendFile(
        join(dir, 'src/ports/clock.ts'),
        "\nimport type { Usage } from '../domain/types.js';\nimport type { GitPort } from './git.js';\n",
      );
      await writeFile(
        join(dir, 'src/ui/allowed.ts'),
        "import type { FleetHandle } from '../core/handle.js';\nexport type H = FleetHandle;\n",
      );
    });
    afterAll(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it('fails, naming every violating import and only those', async () => {
      const result = await lint(dir);
      expect(result.exitCode).not.toBe(0);
      // concise reporter: `× <file>:<line>:<col>: lint/style/noRestrictedImports: <message>`
      const reported = result.all.split('\n').filter((line) => line.includes('noRestrictedImports'));
      for (const [file, , message] of violations) {
        expect(
          reported.some((line) => line.includes(` ${file}:`) && line.includes(message)),
          `${file}: ${message}`,
        ).toBe(true);
      }
      expect(reported).toHaveLength(violations.length);
    });
  });
});
