/**
 * A host laid out in a temp folder like / (its /proc/sys files, /etc/apparmor.d, container marks, programs
 * in /usr/bin), read by the real UsernsFacts reader: each cause of a sandbox that cannot run, reproduced
 * with real files and a real `bwrap` that fails the way the real one does on such a host.
 */
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { hostUsernsFacts } from '../../src/adapters/sandbox/userns-host-facts.js';
import type { UsernsFacts } from '../../src/ports/userns-facts.js';

export interface FakeHost {
  /** host files and their text (`/proc/sys/user/max_user_namespaces`: '0\n') */
  files?: Record<string, string>;
  /** where bwrap is (a host path), with what it writes to stderr and its exit code; absent: not installed */
  bwrap?: { at?: string; stderr: string; exitCode: number };
  /** other programs present in /usr/bin (package managers) */
  programs?: string[];
  platform?: string;
}

export interface FakeHostHandle {
  facts: UsernsFacts;
  root: string;
  cleanup: () => Promise<void>;
}

const sh = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export async function fakeUsernsHost(host: FakeHost): Promise<FakeHostHandle> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'lf-userns-host-'));
  const put = async (file: string, text: string, mode = 0o644) => {
    const at = path.join(root, file);
    await mkdir(path.dirname(at), { recursive: true });
    await writeFile(at, text);
    await chmod(at, mode);
  };
  for (const [file, text] of Object.entries(host.files ?? {})) await put(file, text);
  for (const program of host.programs ?? []) await put(path.join('/usr/bin', program), '#!/bin/sh\nexit 0\n', 0o755);
  const folders = ['/usr/local/bin', '/usr/bin', '/bin'];
  if (host.bwrap !== undefined) {
    const at = host.bwrap.at ?? '/usr/bin/bwrap';
    if (!folders.includes(path.dirname(at))) folders.unshift(path.dirname(at));
    await put(at, `#!/bin/sh\nprintf '%s' ${sh(host.bwrap.stderr)} >&2\nexit ${host.bwrap.exitCode}\n`, 0o755);
  }
  return {
    facts: hostUsernsFacts({ root, path: folders.join(':'), platform: host.platform ?? 'linux' }),
    root,
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}
