import { lstatSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';

/**
 * A PATH of one folder holding a link to every program the current PATH (and the system folders) offer,
 * except the named ones: a machine where, say, bubblewrap was never installed. `cleanup` removes it.
 */
export function pathWithout(names: readonly string[]): { path: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'loopfleet-path-'));
  const folders = [
    dirname(process.execPath),
    ...(process.env.PATH ?? '').split(':'),
    '/usr/local/bin',
    '/usr/bin',
    '/bin',
  ];
  for (const folder of folders) {
    if (!isAbsolute(folder)) continue;
    let entries: string[];
    try {
      entries = readdirSync(folder);
    } catch {
      continue;
    }
    for (const name of entries) {
      if (names.includes(name)) continue;
      const target = join(folder, name);
      try {
        lstatSync(join(dir, name));
        continue; // an earlier folder of PATH wins, as it would
      } catch {
        // not linked yet
      }
      try {
        if (!statSync(target).isFile()) continue;
      } catch {
        continue;
      }
      symlinkSync(target, join(dir, name));
    }
  }
  return { path: dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
