/**
 * The diagnosis on a real host where no user namespace can be made: loopfleet (built, `npm run build`
 * first) run inside a bubblewrap sandbox that forbids further user namespaces (--disable-userns), where
 * its own probe of bubblewrap fails as it would in such a sandbox or container.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { ExecaRunner } from '../../src/adapters/sandbox/execa-runner.js';
import type { SandboxCause } from '../../src/domain/sandbox-cause.js';
import { ROOT } from '../helpers/paths.js';

const DIST = path.join(ROOT, 'dist', 'adapters', 'sandbox', 'userns-diagnosis.js');
const available = await new ExecaRunner().sandboxAvailable();
const bwrap = available ? (await execa('/bin/sh', ['-c', 'command -v bwrap'], { reject: false })).stdout.trim() : '';
const disables =
  bwrap !== '' && (await execa(bwrap, ['--help'], { reject: false })).stdout.includes('--disable-userns');

const sh = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

it('runs against the built diagnosis (`npm run build` first)', () => {
  expect(existsSync(DIST)).toBe(true);
});

describe.runIf(available && disables)('diagnosing inside a sandbox that forbids user namespaces', () => {
  it("names the nesting limit, bubblewrap's own words, and the way out", { timeout: 60_000 }, async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'lf-userns-nested-'));
    try {
      const modules = await realpath(path.join(ROOT, 'node_modules'));
      const root = await realpath(ROOT);
      const runner = new ExecaRunner({ alterSandboxArgs: (args) => [...args, '--disable-userns'] });
      const code = `const { hostSandboxCause } = await import(${JSON.stringify(DIST)}); console.log(JSON.stringify(await hostSandboxCause()));`;
      const r = await runner.run(`node --input-type=module -e ${sh(code)}`, {
        cwd: dir,
        env: { PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin` },
        timeoutMs: 30_000,
        sandbox: {
          writable: [dir],
          mounts: [...new Set([root, modules])].map((src) => ({ src, dest: src, readOnly: true })),
        },
      });
      expect(r.exitCode, r.output).toBe(0);
      const cause = JSON.parse(r.output.trim().split('\n').at(-1)!) as SandboxCause;
      expect(cause.kind).toBe('userns-limit');
      expect(cause.message).toMatch(
        /^no further user namespace can be made: loopfleet runs inside a sandbox or container that forbids nesting one/,
      );
      expect(cause.detail).toMatch(/^bwrap: Creating new namespace failed: .*(ENOSPC|No space left on device)/);
      expect(cause.fix).toMatch(/^run loopfleet outside that sandbox/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
