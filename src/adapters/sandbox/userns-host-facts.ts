/**
 * The real UsernsFacts: files of the host (or of a folder laid out like its root), programs on a PATH, and a
 * probe that runs bubblewrap with the same isolation as every sandbox loopfleet makes. Every path, a
 * program found on PATH included, is a host path: under another root it is read (and run) from there.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import type { BwrapProbe, UsernsFacts } from '../../ports/userns-facts.js';
import { exists, isExecutable } from '../fs/paths.js';
import { probeArgs } from './bwrap-args.js';

const PROBE_TIMEOUT_MS = 10_000;
/** Errors that mean "this file is not there for us", as opposed to a broken read. */
const ABSENT = new Set(['ENOENT', 'ENOTDIR', 'EACCES', 'EPERM', 'EINVAL']);

export interface HostFactsOptions {
  /** where the host's `/` is read from; default `/` */
  root?: string;
  /** the PATH searched for programs (its folders read under `root`, found programs named by host path); default this process's */
  path?: string;
  /** default this process's */
  platform?: string;
}

export function hostUsernsFacts(options: HostFactsOptions = {}): UsernsFacts {
  const root = options.root ?? '/';
  const at = (file: string): string => path.join(root, file);
  const searchPath = options.path ?? process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin';
  return {
    platform: options.platform ?? process.platform,
    async read(file: string): Promise<string | null> {
      try {
        return await readFile(at(file), 'utf8');
      } catch (error) {
        if (ABSENT.has((error as NodeJS.ErrnoException).code ?? '')) return null;
        throw error;
      }
    },
    exists: (file: string) => exists(at(file)),
    async which(name: string): Promise<string | null> {
      for (const dir of searchPath.split(':')) {
        if (!path.isAbsolute(dir)) continue;
        const candidate = path.join(dir, name);
        if (await isExecutable(at(candidate))) return candidate;
      }
      return null;
    },
    async probe(bwrap: string): Promise<BwrapProbe> {
      const r = await execa(at(bwrap), [...(await probeArgs()), '--', '/bin/sh', '-c', 'exit 0'], {
        reject: false,
        timeout: PROBE_TIMEOUT_MS,
        stdin: 'ignore',
        extendEnv: false,
        env: { PATH: '/usr/bin:/bin', LANG: 'C' },
      });
      return { exitCode: r.exitCode ?? null, stderr: String(r.stderr ?? '') };
    },
  };
}
