/**
 * push, fetch and ls-remote: git's transport, reached only here, through GitExec with the transport
 * exception of {@link transportConfig} for the scheme of the one URL being reached.
 */
import type { PushResult, RemoteAuth } from '../../ports/git.js';
import { GitCommandError, GitExec, assertRefName, lines } from './exec.js';
import { originOf, userinfoOf, withoutUserinfo } from '../../domain/remote-url.js';
import { authEnv, basicHeader, transportConfig } from './transport.js';

/** The URL behind `remote` (a remote's name, or a URL or path already); throws for an unknown remote name. */
export async function resolveRemote(git: GitExec, remote: string): Promise<string> {
  assertRefName(remote, 'remote');
  if (/^[A-Za-z0-9._-]+$/.test(remote) && !remote.includes('/')) {
    const url = await remoteUrl(git, remote);
    if (url === null)
      throw new Error(`no git remote named ${JSON.stringify(remote)} (git remote -v lists the remotes)`);
    return url;
  }
  return remote;
}

export async function remoteUrl(git: GitExec, name: string): Promise<string | null> {
  assertRefName(name, 'remote');
  const { stdout, exitCode } = await git.run(['config', '--get', `remote.${name}.url`], { ok: [0, 1] });
  return exitCode === 0 ? stdout.trim() || null : null;
}

/**
 * git bound to `dir` that may reach `url`, and the URL to name on its command line. That URL has no user
 * information ({@link withoutUserinfo}): a password a remote's URL carries would be in `ps` for every user of
 * the machine. The credential given instead, in this process's environment only: the forge token's header
 * when `auth` is for this URL's own https origin, else the URL's own user and password as a Basic header for
 * its origin; none at all for a local path, ssh, or another host.
 */
function transportGit(
  dir: string,
  env: Record<string, string>,
  url: string,
  auth: RemoteAuth | undefined,
): { git: GitExec; url: string } {
  const shown = withoutUserinfo(url);
  const origin = originOf(url);
  const info = userinfoOf(url);
  const header =
    auth !== undefined && origin !== null && origin.startsWith('https://') && origin === originOf(auth.urlPrefix)
      ? { urlPrefix: origin, header: auth.header }
      : info !== null && origin !== null
        ? { urlPrefix: origin, header: basicHeader(info.user, info.password) }
        : undefined;
  return { git: new GitExec(dir, header === undefined ? env : authEnv(header, env), transportConfig(url)), url: shown };
}

export async function push(
  local: GitExec,
  env: Record<string, string>,
  remote: string,
  source: string,
  target: string,
  expect: string | null,
  auth?: RemoteAuth,
): Promise<PushResult> {
  assertRefName(source, 'source');
  assertRefName(target, 'target');
  if (!target.startsWith('refs/')) throw new Error(`push target must be a full ref: ${JSON.stringify(target)}`);
  const commit = (await local.out(['rev-parse', '--verify', '--end-of-options', `${source}^{commit}`])).trim();
  const { git, url } = transportGit(local.dir, env, await resolveRemote(local, remote), auth);
  // An empty expected value is git's "the ref must not exist yet".
  const lease = `--force-with-lease=${target}:${expect ?? ''}`;
  const args = ['push', '--porcelain', '--no-verify', '--no-recurse-submodules', lease, url, `${commit}:${target}`];
  try {
    await git.run(args);
    return { kind: 'pushed', commit };
  } catch (error) {
    if (!(error instanceof GitCommandError)) throw error;
    // --porcelain prints `!<tab>src:dst<tab>[rejected] (stale info)` for a refused ref; anything else is a failure.
    const refused = lines(error.stdout).find((l) => l.startsWith('!'));
    if (refused === undefined)
      throw new Error(`git push to ${url} failed: ${(error.stderr || error.message).trim()}`, {
        cause: error,
      });
    const reason = /\[(rejected|remote rejected)\]\s*(.*)$/.exec(refused)?.[0] ?? refused.replace(/^!\t/, '');
    return { kind: 'rejected', reason: reason.trim() };
  }
}

export async function fetch(
  local: GitExec,
  env: Record<string, string>,
  remote: string,
  refspecs: readonly string[],
  auth?: RemoteAuth,
): Promise<void> {
  for (const spec of refspecs) assertRefName(spec.replace(/^\+/, ''), 'refspec');
  const { git, url } = transportGit(local.dir, env, await resolveRemote(local, remote), auth);
  try {
    await git.run([
      'fetch',
      '--no-tags',
      '--no-recurse-submodules',
      '--no-write-fetch-head',
      '--quiet',
      url,
      ...refspecs,
    ]);
  } catch (error) {
    if (!(error instanceof GitCommandError)) throw error;
    throw new Error(`git fetch from ${url} failed: ${(error.stderr || error.message).trim()}`, {
      cause: error,
    });
  }
}

export async function lsRemote(
  local: GitExec,
  env: Record<string, string>,
  remote: string,
  refs: readonly string[],
  auth?: RemoteAuth,
): Promise<Map<string, string>> {
  for (const ref of refs) assertRefName(ref, 'ref');
  const { git, url } = transportGit(local.dir, env, await resolveRemote(local, remote), auth);
  let out: string;
  try {
    out = await git.out(['ls-remote', '--refs', url, ...refs]);
  } catch (error) {
    if (!(error instanceof GitCommandError)) throw error;
    throw new Error(`git ls-remote ${url} failed: ${(error.stderr || error.message).trim()}`, {
      cause: error,
    });
  }
  const found = new Map<string, string>();
  for (const line of lines(out)) {
    const [sha, name] = line.split('\t');
    if (sha !== undefined && name !== undefined && (refs.length === 0 || refs.includes(name))) found.set(name, sha);
  }
  return found;
}
