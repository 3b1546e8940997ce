import { access, constants } from 'node:fs/promises';
import { delimiter, isAbsolute, join } from 'node:path';

/**
 * The demo without bubblewrap. Its agent is the bundled scripted model and its checks are the demo
 * project's own files (backlog/demo-repo), so they may run unsandboxed — for the demo alone: the
 * exception is an override of that one session, never written to a backlog, and a real repository
 * without bubblewrap still has its checks refused.
 */

/** the one command that installs bubblewrap here, or null where there is no bubblewrap (macOS) */
export async function bubblewrapInstallCommand(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): Promise<string | null> {
  if (platform !== 'linux') return null;
  const sudo = process.getuid?.() === 0 ? '' : 'sudo ';
  const managers: Array<[string, string]> = [
    ['apt-get', 'apt-get install bubblewrap'],
    ['dnf', 'dnf install bubblewrap'],
    ['pacman', 'pacman -S bubblewrap'],
    ['zypper', 'zypper install bubblewrap'],
    ['apk', 'apk add bubblewrap'],
  ];
  for (const [program, command] of managers) {
    if (await onPath(program, env)) return `${sudo}${command}`;
  }
  return `${sudo}apt-get install bubblewrap`;
}

async function onPath(program: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!isAbsolute(dir)) continue;
    try {
      await access(join(dir, program), constants.X_OK);
      return true;
    } catch {
      // not in this folder
    }
  }
  return false;
}

/** The demo's first line where bubblewrap is missing: what runs unsandboxed, and how to install it. */
export function unsandboxedDemoNotice(install: string | null): string {
  const how = install === null ? 'bubblewrap is Linux-only; see the README\'s sandbox section' : `install it: ${install}`;
  return (
    'loopfleet demo: no bubblewrap here, so the demo\'s checks run unsandboxed — its agent is the bundled scripted model and its ' +
    `checks are the demo project's own files; a real repository is refused without it (${how})`
  );
}
