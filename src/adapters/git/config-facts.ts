/**
 * Where the person's own git configuration reaches into the repository: files it includes
 * (`include.path`, `includeIf.<condition>.path`) and the hook folder `core.hooksPath` names. A task branch
 * that changes one of them changes what the person's git runs once it is merged, so the guard refuses it.
 * Only read here (`git config` executes nothing); the answer is repository-relative.
 */
import path from 'node:path';
import type { ConfigReach } from '../../ports/git.js';
import type { GitExec } from './exec.js';

/** `file:<origin>\0<key>\n<value>\0` records of `git config --show-origin -z --get-regexp`. */
function records(stdout: string): Array<{ origin: string | null; key: string; value: string }> {
  const fields = stdout.split('\0');
  const out: Array<{ origin: string | null; key: string; value: string }> = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const origin = fields[i]!;
    const entry = fields[i + 1]!;
    const nl = entry.indexOf('\n');
    out.push({
      origin: origin.startsWith('file:') ? origin.slice('file:'.length) : null,
      key: nl < 0 ? entry : entry.slice(0, nl),
      value: nl < 0 ? '' : entry.slice(nl + 1),
    });
  }
  return out;
}

/** `target` relative to `root`, `/`-separated; null when outside it or inside its `.git`. */
function inside(root: string, target: string): string | null {
  const rel = path.relative(root, target);
  if (rel === '' || rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) return null;
  const posix = rel.split(path.sep).join('/');
  return posix === '.git' || posix.startsWith('.git/') ? null : posix;
}

export async function configReach(git: GitExec, root: string): Promise<ConfigReach> {
  // `--type=path` expands `~/`; every condition of includeIf is taken as met (the refusal is conservative).
  const listed = await git.run(['config', '--show-origin', '-z', '--type=path', '--get-regexp', '^include'], {
    ok: [0, 1],
  });
  const includes = new Set<string>();
  for (const r of records(listed.stdout)) {
    if (!/^include(?:if\..*)?\.path$/i.test(r.key) || r.value === '') continue;
    // A relative include is relative to the file that holds it; git prints that file relative to `root`.
    const holder = r.origin === null ? root : path.resolve(root, r.origin);
    const rel = inside(root, path.resolve(path.dirname(holder), r.value));
    if (rel !== null) includes.add(rel);
  }
  // The person's value, not loopfleet's own `-c core.hooksPath=/dev/null` (every GitExec carries it, see
  // HARDENING_CONFIG): values given on the command line are skipped, the last file's value wins as in git.
  const hooks = await git.run(['config', '--show-origin', '-z', '--type=path', '--get-all', 'core.hooksPath'], {
    ok: [0, 1],
  });
  // `--get-all` without a key in its output: `<origin>\0<value>\0` pairs.
  const fields = hooks.exitCode === 0 ? hooks.stdout.split('\0') : [];
  let value = '';
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i]!.startsWith('file:')) value = fields[i + 1]!;
  // A relative core.hooksPath is relative to the top of the working tree where the hooks run.
  const hooksPath = value === '' ? null : inside(root, path.resolve(root, value));
  return { includes: [...includes].sort(), hooksPath };
}
