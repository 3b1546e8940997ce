import { chmod, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { startModelServer } from '../../src/demo/model-server.js';
import { demoScript } from '../../src/demo/scripts.js';
import { backlogRepo } from '../helpers/fleet-harness.js';
import { FakeGitHub } from '../helpers/fake-github.js';
import { git } from '../helpers/git-repo.js';
import { httpsGitServer } from '../helpers/https-git-server.js';
import { bareOrigin } from '../helpers/pr-remote.js';
import { type ProcessRecord, descendsFrom, gitRecorder, sampleDescendants } from '../helpers/process-sampler.js';
import { CLI } from '../helpers/paths.js';
import { SimpleGitAdapter } from '../../src/adapters/git/simple-git.js';
import { tokenHeader } from '../../src/adapters/git/transport.js';

/**
 * Secrets stay where they are read. A real `--overnight` run with `land: pr` against a loopback GitHub,
 * with forge, model, telemetry and database credentials in its environment; every git it starts is recorded
 * by a `git` on PATH that saves its own `/proc/self/environ` and command line, and every other descendant
 * is sampled from `/proc` while the run lasts. The remote's own hooks dump the environment they get.
 */

const KEY = 'sk-ant-secret-env-0123456789abcdefghijklmnopqrstuvwxyz';
const SENTINELS: Record<string, string> = {
  GITHUB_TOKEN: 'ghp_sentinel_github_token_0002',
  GITLAB_TOKEN: 'glpat-sentinel-gitlab-0003',
  OPENAI_API_KEY: 'sk-sentinel-openai-0004',
  OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer otel-sentinel-0005',
  DATABASE_URL: 'postgres://app:db-sentinel-0006@db.internal/app',
  STRIPE_SECRET_KEY: 'sk_live_sentinel_0007',
};

let cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

/** `name` of each secret a record holds (by value, also base64 of a Basic header), with the process's argv. */
function leaks(records: readonly ProcessRecord[], secrets: Record<string, string>): string[] {
  const found: string[] = [];
  for (const r of records) {
    const text = `${r.argv.join(' ')}\n${r.environ.join('\n')}`;
    for (const [name, value] of Object.entries(secrets)) {
      const basic = Buffer.from(`x-access-token:${value}`).toString('base64');
      if (text.includes(value) || text.includes(basic)) found.push(`${name} in ${r.argv.slice(0, 3).join(' ')}`);
    }
  }
  return found;
}

async function run(root: string, env: Record<string, string>) {
  const child = execa(process.execPath, [CLI, '--overnight'], { cwd: root, env, extendEnv: false, reject: false });
  const sampler = sampleDescendants(child.pid!);
  const result = await child;
  const sampled = await sampler.stop();
  console.info(`${sampler.sweeps} sweeps of /proc`);
  return { result, sampled };
}

async function prSetup() {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
  const github = await new FakeGitHub('acme/widgets').start();
  cleanups.push(() => github.close());
  const server = await startModelServer({
    apiKeys: [KEY],
    script: demoScript([{ taskId: 'T-1', kind: 'pass', edits: [{ path: 'one.txt', content: 'one\n' }] }]),
  });
  cleanups.push(() => server.close());
  const root = await backlogRepo(
    cleanups as Array<() => Promise<void>>,
    'land: pr\nforge: { type: github, repo: acme/widgets }\ncheck: test -f one.txt\nreview: false\nsandbox: off',
    '- [ ] T-1 Write one',
  );
  const recorder = await gitRecorder();
  cleanups.push(() => recorder.cleanup());
  const secrets = { ...SENTINELS, GH_TOKEN: github.token, ANTHROPIC_API_KEY: KEY };
  const env: Record<string, string> = {
    PATH: `${recorder.bin}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    HOME: process.env.HOME ?? '/root',
    NO_COLOR: '1',
    ANTHROPIC_BASE_URL: server.url,
    GITHUB_API_URL: github.url,
    ...secrets,
  };
  return { github, root, recorder, secrets, env };
}

describe('every git loopfleet starts holds no credential it does not need', () => {
  it('a PR run to a bare remote: no git process, nor the remote’s hook, holds a forge, model, telemetry or database secret', {
    timeout: 150_000,
  }, async () => {
    const { github, root, recorder, secrets, env } = await prSetup();
    const bare = await bareOrigin(root, cleanups as Array<() => Promise<void>>);
    const dumps = await mkdtemp(join(tmpdir(), 'lf-hookenv-'));
    cleanups.push(() => rm(dumps, { recursive: true, force: true }));
    await writeFile(join(bare, 'hooks', 'pre-receive'), `#!/bin/sh\ncat >/dev/null\nenv > '${dumps}'/pre-receive.$$\n`);
    await chmod(join(bare, 'hooks', 'pre-receive'), 0o755);

    const { result, sampled } = await run(root, env);
    expect(result.exitCode, result.stdout + result.stderr).toBe(0);
    expect(github.pulls.map((p) => p.head)).toEqual(['loop/T-1']);
    const gits = await recorder.records();
    const hooks = await readdir(dumps);
    expect(hooks.length).toBeGreaterThan(0); // the push reached the remote and ran its hook
    const hookEnvs = await Promise.all(hooks.map((h) => readFile(join(dumps, h), 'utf8')));
    console.info(`bare remote: ${gits.length} git processes recorded, ${sampled.length} processes sampled`);

    expect(leaks(gits, secrets)).toEqual([]);
    expect(leaks(sampled, secrets)).toEqual([]);
    expect(
      leaks(
        hookEnvs.map((e, i) => ({ pid: i, argv: ['pre-receive'], environ: e.split('\n') })),
        secrets,
      ),
    ).toEqual([]);
  });

  it('a PR run to the forge’s host over https: the token is only in the transport processes to that host, in their environment; the URL’s password is nowhere', {
    timeout: 150_000,
  }, async () => {
    const { github, root, recorder, secrets, env } = await prSetup();
    const header = `Basic ${Buffer.from(`x-access-token:${github.token}`).toString('base64')}`;
    const forge = await httpsGitServer(header);
    cleanups.push(() => forge.close());
    await forge.addRepo('acme/widgets.git', root);
    const password = 'glcbt-sentinel-url-password-0008';
    const withPassword = `${forge.url.replace('https://', `https://gitlab-ci-token:${password}@`)}acme/widgets.git`;
    await git(root, 'remote', 'add', 'origin', withPassword);

    const { result, sampled } = await run(root, { ...env, GIT_SSL_CAINFO: forge.caFile });
    expect(result.exitCode, result.stdout + result.stderr).toBe(0);
    expect(
      github.pulls.map((p) => p.head),
      result.stdout,
    ).toEqual(['loop/T-1']);
    expect(forge.authorizations.filter((a) => a === header).length).toBeGreaterThan(0);
    const gits = await recorder.records();
    const holding = gits.filter((r) => leaks([r], { GH_TOKEN: github.token }).length > 0);
    console.info(
      `https remote: ${gits.length} git processes recorded, ${holding.length} holding the token (${holding.map((r) => r.argv[r.argv.findIndex((a) => ['push', 'fetch', 'ls-remote'].includes(a))] ?? r.argv.join(' ')).join(', ')}), ${sampled.length} processes sampled`,
    );
    expect(holding.length).toBeGreaterThan(0);
    for (const r of holding) {
      // a transport command to the forge's host, the token in its environment only
      expect(
        r.argv.some((a) => ['push', 'fetch', 'ls-remote'].includes(a)),
        r.argv.join(' '),
      ).toBe(true);
      expect(
        r.argv.some((a) => a.startsWith(forge.url)),
        r.argv.join(' '),
      ).toBe(true);
      expect(leaks([{ ...r, environ: [] }], { GH_TOKEN: github.token })).toEqual([]);
    }
    const others = gits.filter((r) => !holding.includes(r));
    expect(leaks(others, secrets)).toEqual([]);
    expect(leaks(gits, { URL_PASSWORD: password })).toEqual([]);
    // The transport's own helpers (git-remote-https, send-pack, pack-objects, whichever a sweep of /proc
    // happens to catch) get the header from the push, as git gives it: each of them is git itself.
    const transport = new Set(holding.map((h) => h.pid));
    const helpers = sampled.filter((r) => transport.has(r.pid) || descendsFrom(r, transport, sampled));
    // (The recording wrapper on PATH is `/bin/sh …/bin/git`: its program is the script it runs.)
    const program = (argv: string[]) => (argv[0] === '/bin/sh' ? argv[1] : argv[0]) ?? '';
    for (const r of helpers) expect(program(r.argv), r.argv.join(' ')).toMatch(/(^|\/)git(-remote-https?)?$/);
    expect(
      leaks(
        sampled.filter((r) => !helpers.includes(r)),
        secrets,
      ),
    ).toEqual([]);
    expect(leaks(sampled, { URL_PASSWORD: password })).toEqual([]);

    // Nor in what loopfleet writes or prints: the run's output, state, reports, status --json.
    const status = await execa(process.execPath, [CLI, 'status', '--json'], { cwd: root, env, extendEnv: false });
    const written = await Promise.all(
      (await readdir(join(root, '.loop-worktrees'), { recursive: true, withFileTypes: true }))
        .filter((e) => e.isFile())
        .map((e) => readFile(join(e.parentPath, e.name), 'utf8')),
    );
    for (const text of [result.stdout, result.stderr, status.stdout, ...written]) {
      expect(text).not.toContain(password);
      expect(text).not.toContain(github.token);
    }
  });
});

const setpriv = ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => existsSync(p));

/** Everything an ordinary user (uid 65534) can read of every process's command line and environment, once. */
async function sweepAsNobody(): Promise<string> {
  const script = `const fs = require('node:fs'); const out = [];
for (const pid of fs.readdirSync('/proc').filter((n) => /^\\d+$/.test(n)))
  for (const f of ['cmdline', 'environ'])
    try { out.push(pid + ' ' + f + ' ' + fs.readFileSync('/proc/' + pid + '/' + f).toString('utf8').split('\\0').join(' ')); } catch {}
process.stdout.write(out.join('\\n'));`;
  const r = await execa(
    setpriv!,
    ['--reuid', '65534', '--regid', '65534', '--clear-groups', process.execPath, '--input-type=commonjs', '-e', script],
    { env: { PATH: '/usr/bin:/bin' }, extendEnv: false, cwd: '/' },
  );
  return r.stdout;
}

describe.runIf(process.getuid?.() === 0 && setpriv !== undefined)('as an ordinary user on the same machine', () => {
  it('sees neither the forge token nor a URL’s password in any process while a push waits on the forge', {
    timeout: 60_000,
  }, async () => {
    const token = 'ghp_sentinel_seen_by_nobody_0009';
    const password = 'glcbt-sentinel-nobody-0010';
    const header = tokenHeader('x-access-token', token);
    let swept: string | null = null;
    // The forge holds the push's first request until the ordinary user has looked at every process.
    const forge = await httpsGitServer(header.replace(/^Authorization: /, ''), async () => {
      swept ??= await sweepAsNobody();
    });
    cleanups.push(() => forge.close());
    const { makeRepo } = await import('../helpers/git-repo.js');
    const repo = await makeRepo({ 'a.txt': 'one\n' });
    cleanups.push(repo.cleanup);
    await forge.addRepo('acme/widgets.git', repo.root);
    const url = `${forge.url.replace('https://', `https://ci:${password}@`)}acme/widgets.git`;

    const ca = process.env.GIT_SSL_CAINFO;
    process.env.GIT_SSL_CAINFO = forge.caFile;
    try {
      const pushed = await new SimpleGitAdapter(repo.root).push(url, 'main', 'refs/heads/loop/T-9', null, {
        urlPrefix: forge.url,
        header,
      });
      expect(pushed.kind).toBe('pushed');
    } finally {
      if (ca === undefined) delete process.env.GIT_SSL_CAINFO;
      else process.env.GIT_SSL_CAINFO = ca;
    }
    const seen: string = swept ?? '';
    expect(seen).not.toContain(password);
    // the sweep ran while the push was alive: it saw the push's command line, without the password
    expect(seen).toMatch(new RegExp(`cmdline .*git.* push .*${forge.url.replace(/[.]/g, '\\.')}acme/widgets\\.git`));
    expect(seen).not.toContain(token);
    expect(seen).not.toContain(Buffer.from(`x-access-token:${token}`).toString('base64'));
  });
});
