/**
 * Files the check sees but the commit leaves out because the attempt itself changed a `.gitignore`: an
 * agent could otherwise hide the code that makes the check pass from the commit. Only a changed
 * `.gitignore` can make a file newly ignored (info/exclude and the person's config are out of its reach).
 */
import ignore from 'ignore';
import type { FileVersions } from './check-definition.js';

function matcher(text: string | null) {
  return ignore().add(text ?? '');
}

/** `ignored`: untracked ignored paths of the working tree (folders end with `/`); `gitignores`: the changed `.gitignore` files. */
export function newlyIgnored(ignored: readonly string[], gitignores: readonly FileVersions[]): string[] {
  const reasons: string[] = [];
  for (const file of gitignores) {
    const dir = file.path.includes('/') ? file.path.slice(0, file.path.lastIndexOf('/') + 1) : '';
    const before = matcher(file.base);
    const after = matcher(file.next);
    for (const p of ignored) {
      if (!p.startsWith(dir) || p === dir) continue;
      const rel = p.slice(dir.length);
      if (after.ignores(rel) && !before.ignores(rel)) {
        reasons.push(`guard: ${p} is left out of the commit only by the change to ${file.path}, yet the check sees it`);
      }
    }
  }
  return reasons;
}
