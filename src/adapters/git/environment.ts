/**
 * The environment of every git process loopfleet starts: an allow-list of what git, its transports and the
 * person's credential helpers read, and nothing else.
 *
 * Invariants:
 * - no forge token, model key, telemetry header or application secret (`DATABASE_URL`, `…_SECRET_KEY`)
 *   reaches a git process, nor through it a hook of a local remote or a transport helper: the names below
 *   are the whole of what is passed, and a name that looks like a credential is dropped even when it starts
 *   with `GIT_`;
 * - the one credential a git process may get is the forge token's header, added by {@link authEnv} to the
 *   push, fetch or ls-remote that reaches the forge's own host over https;
 * - git never follows repository-locating variables (`GIT_DIR`, `GIT_INDEX_FILE`...) inherited from the
 *   caller, nor editors, pagers or ssh programs of its environment: an instance is bound to one folder.
 */
import { CA_VARIABLES, PROXY_VARIABLES } from '../../domain/host-env.js';

/** Variables that would point git at another repository, index or object store than the bound folder. */
const LOCATING_VARS = [
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_INDEX_FILE',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_COMMON_DIR',
  'GIT_NAMESPACE',
  'GIT_PREFIX',
  'GIT_CEILING_DIRECTORIES',
];

/** Interactive or network-only helpers: none is used by the local, non-interactive commands run here. */
const INTERACTIVE_VARS = [
  'GIT_EDITOR',
  'GIT_SEQUENCE_EDITOR',
  'GIT_PAGER',
  'GIT_ASKPASS',
  'GIT_SSH',
  'GIT_SSH_COMMAND',
  'GIT_PROXY_COMMAND',
  'GIT_EXTERNAL_DIFF',
  'GIT_TEMPLATE_DIR',
];

/**
 * What git and the programs it may start for a transport need: the process basics, the locale, where the
 * person's configuration and credential helpers live, the ssh agent, and the proxies and CA bundles of the
 * network.
 */
const PASSED = new Set([
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'TMPDIR',
  'TZ',
  'LANG',
  'LANGUAGE',
  'XDG_CONFIG_HOME',
  'XDG_CACHE_HOME',
  'XDG_DATA_HOME',
  'XDG_RUNTIME_DIR',
  'SSH_AUTH_SOCK',
  ...CA_VARIABLES,
  ...PROXY_VARIABLES,
]);

/** A name that says it holds a credential: never passed, whatever its prefix. */
const SECRET_NAME = /TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|API_?KEY|PRIVATE|_KEY$|_AUTH$|_DSN$|_URL$/i;

/** whether a variable of the person's environment reaches git */
export function passedToGit(name: string): boolean {
  if (LOCATING_VARS.includes(name) || INTERACTIVE_VARS.includes(name)) return false;
  if (PASSED.has(name) || name.startsWith('LC_')) return true;
  // The person's git settings (GIT_CONFIG_GLOBAL, GIT_CONFIG_COUNT/KEY_n/VALUE_n a calling git set, GIT_EXEC_PATH,
  // GIT_SSL_*, GIT_TRACE*): git's own, read as their own git would read them.
  return name.startsWith('GIT_') && !SECRET_NAME.test(name);
}

/** The environment of a git process: the allowed part of this process's environment, then git's fixed settings and `extra`. */
export function gitEnvironment(
  extra: Record<string, string> = {},
  from: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(from)) if (value !== undefined && passedToGit(key)) env[key] = value;
  return { ...env, LC_ALL: 'C', GIT_TERMINAL_PROMPT: '0', GIT_OPTIONAL_LOCKS: '0', ...extra };
}
