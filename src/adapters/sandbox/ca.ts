/**
 * The person's CA bundles inside the sandbox: each CA variable of the command's environment
 * (NODE_EXTRA_CA_CERTS, SSL_CERT_FILE, SSL_CERT_DIR, REQUESTS_CA_BUNDLE, …) that names a file — or, for a
 * folder variable, a folder — outside the system folders is bound read-only at the same path, so a
 * company's TLS-inspecting CA is trusted inside as it is in the person's shell. Nothing else of the folder
 * that holds it becomes visible. A variable naming nothing is left alone (the tool says what is missing).
 */
import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { CA_VARIABLES } from '../../domain/host-env.js';
import { isInside } from '../fs/paths.js';
import { SYSTEM_FOLDERS, type Mount } from './system.js';

export async function caMounts(env: Record<string, string>): Promise<Mount[]> {
  const mounts: Mount[] = [];
  for (const name of CA_VARIABLES) {
    const value = env[name];
    if (value === undefined || !path.isAbsolute(value)) continue;
    const dest = path.normalize(value);
    if (SYSTEM_FOLDERS.some((s) => isInside(dest, s)) || mounts.some((m) => m.dest === dest)) continue;
    try {
      const info = await stat(dest);
      if (!info.isFile() && !(name === 'SSL_CERT_DIR' && info.isDirectory())) continue;
      mounts.push({ kind: 'ro', src: await realpath(dest), dest });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'EACCES' && code !== 'ENOTDIR') throw error;
    }
  }
  return mounts;
}
