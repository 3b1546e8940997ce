/**
 * A private, throw-away view of a CLI's config folders for one sandboxed run.
 *
 * Invariants:
 * - the sandbox sees a copy (in a folder of loopfleet's, mode 0700), bound read-write at the real path:
 *   nothing the run writes there — memory files (`CLAUDE.md`), settings and their hooks, MCP servers,
 *   session history — reaches the person's folders or any later run, which gets a fresh copy;
 * - the person's folders are read, never written, with one exception: a login file (`preset.loginFiles`)
 *   the CLI rewrote during the run (a refreshed, possibly rotated token) is merged back when it is a JSON
 *   object and the person's own file did not change meanwhile (their own refresh wins); nothing else is;
 * - caches and session history (`ConfigPath.cache`) are not copied: they are large and no run needs them;
 * - links inside a config folder are copied as links (never followed while copying); inside the sandbox
 *   they lead nowhere the sandbox cannot already see.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import {
  chmod,
  cp,
  copyFile,
  lstat,
  mkdir,
  mkdtemp,
  open,
  readFile,
  realpath,
  rename,
  rm,
  stat,
  type FileHandle,
} from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { SandboxMount } from '../../../ports/process.js';
import { writeNew } from '../../fs/nofollow.js';
import type { AgentPreset } from './types.js';

export interface ConfigView {
  /** the copies, bound read-write at the config folders' real paths */
  mounts: SandboxMount[];
  /** merges back refreshed login files, then removes the copies; returns the host files it rewrote */
  close(): Promise<string[]>;
}

interface LoginFile {
  host: string;
  copy: string;
  before: Buffer;
}

async function present(p: string): Promise<import('node:fs').Stats | null> {
  try {
    return await stat(p);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw error;
  }
}

async function bytesOrNull(p: string): Promise<Buffer | null> {
  try {
    return await readFile(p);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** The bytes of the regular file `p` (a link is not followed: the run may have left one), or null. */
async function ownBytesOrNull(p: string): Promise<Buffer | null> {
  let handle: FileHandle;
  try {
    handle = await open(p, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ELOOP') return null;
    throw error;
  }
  try {
    return (await handle.stat()).isFile() ? await handle.readFile() : null;
  } finally {
    await handle.close();
  }
}

function isJsonObject(bytes: Buffer): boolean {
  try {
    const value: unknown = JSON.parse(bytes.toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

/** Replaces the person's `host` file by `content`, atomically, keeping its mode. */
async function replaceHostFile(host: string, content: Buffer): Promise<void> {
  const target = await realpath(host);
  const mode = (await stat(target)).mode & 0o7777;
  const tmp = path.join(
    path.dirname(target),
    `.${path.basename(target)}.loopfleet-${randomBytes(4).toString('hex')}.tmp`,
  );
  try {
    await writeNew(tmp, content, mode);
    await rename(tmp, target);
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
}

export async function prepareConfigView(preset: AgentPreset, home: string): Promise<ConfigView> {
  const root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'loopfleet-config-')));
  await chmod(root, 0o700);
  const remove = () => rm(root, { recursive: true, force: true });
  try {
    const mounts: SandboxMount[] = [];
    const logins: LoginFile[] = [];
    for (const c of preset.configPaths) {
      const at = path.join(home, c.path);
      const info = await present(at);
      if (info === null || (c.kind === 'dir' ? !info.isDirectory() : !info.isFile())) continue;
      const src = await realpath(at);
      const copy = path.join(root, c.path);
      await mkdir(path.dirname(copy), { recursive: true });
      if (c.kind === 'file') {
        await copyFile(src, copy);
      } else {
        const cache = new Set(c.cache ?? []);
        await cp(src, copy, {
          recursive: true,
          verbatimSymlinks: true,
          preserveTimestamps: true,
          // Sockets and other special files are not copied; top-level caches are left out.
          filter: async (from) => {
            const rel = path.relative(src, from);
            if (rel !== '' && cache.has(rel.split(path.sep)[0]!)) return false;
            const kind = await lstat(from);
            return kind.isFile() || kind.isDirectory() || kind.isSymbolicLink();
          },
        });
      }
      mounts.push({ src: copy, dest: at, readOnly: false });
      for (const login of preset.loginFiles) {
        const rel = path.relative(c.path, login);
        if (rel.startsWith('..') || path.isAbsolute(rel)) continue;
        const copied = rel === '' ? copy : path.join(copy, rel);
        const before = await bytesOrNull(copied);
        if (before !== null) logins.push({ host: path.join(home, login), copy: copied, before });
      }
    }
    return {
      mounts,
      async close() {
        try {
          const merged: string[] = [];
          for (const login of logins) {
            const after = await ownBytesOrNull(login.copy);
            if (after === null || after.equals(login.before) || !isJsonObject(after)) continue;
            const now = await bytesOrNull(login.host);
            if (now === null || !now.equals(login.before)) continue;
            await replaceHostFile(login.host, after);
            merged.push(login.host);
          }
          return merged;
        } finally {
          await remove();
        }
      },
    };
  } catch (error) {
    await remove();
    throw error;
  }
}
