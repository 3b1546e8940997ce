/**
 * Names of the person's environment that loopfleet treats specially: the credentials it holds (never passed
 * to setup, checks or shells), the CA bundles and proxies that networking needs.
 */

/**
 * Credentials loopfleet holds: the model keys every agent preset reads (their `credentialEnv`, see
 * {@link AgentPreset}) and the forge and tracker tokens (`LINEAR_API_KEY`). Setup on the person's code gets their environment minus
 * these, and the sandbox never gets them, not even when `env:` lists one; the presets' test checks that
 * each preset's own prefix is covered. `CI_JOB_TOKEN` is GitLab CI's own token, when loopfleet runs in a job;
 * `LOOPFLEET_QUEUE_SECRET` signs the queue's messages (whoever holds it can command every worker);
 * `LOOPFLEET_SERVE_TOKEN` opens `loopfleet serve` (whoever holds it can merge and discard).
 */
const CREDENTIAL =
  /^(ANTHROPIC_|CLAUDE_|OPENAI_|CODEX_|GEMINI_|GOOGLE_|OPENCODE_)|^(GH_TOKEN|GITHUB_TOKEN|GH_ENTERPRISE_TOKEN|GITHUB_ENTERPRISE_TOKEN|GITLAB_TOKEN|CI_JOB_TOKEN|LINEAR_API_KEY|LOOPFLEET_QUEUE_SECRET|LOOPFLEET_SERVE_TOKEN)$/;

export function isLoopfleetCredential(name: string): boolean {
  return CREDENTIAL.test(name);
}

/**
 * Variables naming a CA bundle (a file, or a folder for SSL_CERT_DIR): passed into the sandbox with the file
 * bound read-only, so a company's TLS-inspecting CA is trusted there too.
 */
export const CA_VARIABLES: readonly string[] = [
  'NODE_EXTRA_CA_CERTS',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'REQUESTS_CA_BUNDLE',
  'CURL_CA_BUNDLE',
  'GIT_SSL_CAINFO',
  'PIP_CERT',
  'NPM_CONFIG_CAFILE',
  'npm_config_cafile',
];

/** The person's proxy settings: used by the egress proxy upstream, never passed into the sandbox as they are. */
export const PROXY_VARIABLES: readonly string[] = [
  'HTTPS_PROXY',
  'https_proxy',
  'HTTP_PROXY',
  'http_proxy',
  'NO_PROXY',
  'no_proxy',
  'ALL_PROXY',
  'all_proxy',
];
