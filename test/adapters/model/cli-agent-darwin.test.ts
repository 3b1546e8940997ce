/**
 * A CLI agent on the macOS path, end to end on this Linux machine: the client and the runner are told the
 * platform is darwin, and srt's Linux backend stands in for Seatbelt (see sandbox-platform.test.ts; on a Mac,
 * Seatbelt itself). A fake
 * `claude` (a shell script) records what it was given, reaches its loopback model endpoint through the
 * egress proxy and tries a second loopback service, then replays a recorded stream-json result.
 */
import { access, chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CliAgentClient } from '../../../src/adapters/model/cli-agent.js';
import { ExecaRunner } from '../../../src/adapters/sandbox/execa-runner.js';
import { makeRepo } from '../../helpers/git-repo.js';
import { presetRequest } from '../../helpers/preset-request.js';
import { cleanupsAfterEach, loopbackService } from '../../helpers/loopback-service.js';

const onMac = process.platform === 'darwin';
const srtTools =
  onMac ||
  (
    await Promise.all(
      ['/usr/bin/bwrap', '/usr/bin/socat', '/usr/bin/rg'].map((p) =>
        access(p).then(
          () => true,
          () => false,
        ),
      ),
    )
  ).every(Boolean);

const cleanups = cleanupsAfterEach();

const serve = (name: string, hits: string[]) => loopbackService(cleanups, (url) => hits.push(`${name} ${url}`), name);

const RESULT = JSON.stringify({
  type: 'result',
  subtype: 'success',
  is_error: false,
  result: 'All done.',
  usage: { input_tokens: 3, output_tokens: 7, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  total_cost_usd: 0.001,
  permission_denials: [],
});

function fake(node: string, bystander: number, realHome: string): string {
  const js = (url: string) =>
    `fetch(${url}).then(async (r) => console.log(r.status, await r.text()), (e) => console.log("error", String(e.cause?.message ?? e.message)))`;
  return `#!/bin/sh
cat > /dev/null
printf '%s\\n' "$@" > argv.txt
env | sort > env.txt
(cat "$HOME/.claude/settings.json" 2>&1 || echo unreadable) > settings.txt
echo '{"hooks":"evil"}' > "$HOME/.claude/settings.json"
echo '{"hooks":"evil"}' > ${realHome}/.claude/settings.json 2>/dev/null
(cat ${realHome}/secret.txt 2>/dev/null || echo unreadable) > secret.txt
NODE_USE_ENV_PROXY=1 ${node} -e '${js('process.env.ANTHROPIC_BASE_URL + "/v1/models"')}' > model.txt 2>&1
NODE_USE_ENV_PROXY=1 ${node} -e '${js(`"http://127.0.0.1:${bystander}/steal"`)}' > bystander.txt 2>&1
printf '%s\\n' '${RESULT}'
`;
}

describe('a CLI agent under sandbox-runtime (the macOS path)', () => {
  it.runIf(srtTools)(
    'claude runs with its own sandbox off, its config copy as HOME, and reaches only its model',
    async () => {
      const repo = await makeRepo({ 'README.md': 'hi\n' });
      cleanups.push(repo.cleanup);
      const home = await mkdtemp(path.join(os.tmpdir(), 'lf-darwin-home-'));
      cleanups.push(() => rm(home, { recursive: true, force: true }));
      await mkdir(path.join(home, '.claude'));
      await writeFile(path.join(home, '.claude', 'settings.json'), '{"sandbox":{"enabled":true}}\n');
      await writeFile(path.join(home, 'secret.txt'), 'host secret\n');
      const binDir = await mkdtemp(path.join(os.tmpdir(), 'lf-darwin-bin-'));
      cleanups.push(() => rm(binDir, { recursive: true, force: true }));

      const hits: string[] = [];
      const model = await serve('model', hits);
      const bystander = await serve('bystander', hits);
      const bin = path.join(binDir, 'claude');
      await writeFile(bin, fake(process.execPath, bystander, home));
      await chmod(bin, 0o755);

      // On a Mac the real Seatbelt; elsewhere srt's Linux backend with this machine's facts.
      const runner = onMac
        ? new ExecaRunner()
        : new ExecaRunner({ platform: 'darwin', facts: {}, enforcerWorks: async () => true });
      const client = new CliAgentClient({
        processRunner: runner,
        sandboxAvailable: true,
        platform: 'darwin',
        hostEnv: {
          HOME: home,
          PATH: '/usr/bin:/bin',
          ANTHROPIC_API_KEY: 'sk-ant-darwin',
          ANTHROPIC_BASE_URL: `http://127.0.0.1:${model}`,
          GITHUB_TOKEN: 'ghp_x',
        },
      });
      const request = presetRequest(
        { preset: 'claude-code', bin },
        'implementer',
        { model: 'claude-sonnet-5-5', prompt: 'Do it.', workdir: repo.root },
        { env: { PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin` } },
      );
      const result = await client.runAgent(request, () => {});
      expect(result.text).toContain('All done.');

      const read = (f: string) => readFile(path.join(repo.root, f), 'utf8');
      const argv = (await read('argv.txt')).split('\n');
      expect(argv.slice(argv.indexOf('--settings'), argv.indexOf('--settings') + 2)).toEqual([
        '--settings',
        '{"sandbox":{"enabled":false}}',
      ]);
      const env = await read('env.txt');
      expect(env).toContain('SANDBOX_RUNTIME=1');
      expect(env).toMatch(/^HTTPS_PROXY=http:\/\/localhost:\d+$/m);
      expect(env).not.toMatch(/^NO_PROXY=/m);
      expect(env).toContain('ANTHROPIC_API_KEY=sk-ant-darwin');
      expect(env).not.toContain('GITHUB_TOKEN');
      // HOME is the private copy's root: the CLI finds its settings there, nothing else of the person's home.
      const insideHome = /^HOME=(.+)$/m.exec(env)![1]!;
      expect(insideHome).not.toBe(home);
      expect(await read('settings.txt')).toBe('{"sandbox":{"enabled":true}}\n');
      // What it writes there dies with the copy; the person's own folder is neither written nor readable.
      expect(await readFile(path.join(home, '.claude', 'settings.json'), 'utf8')).toBe(
        '{"sandbox":{"enabled":true}}\n',
      );
      expect(await read('secret.txt')).toBe('unreadable\n');
      // The model endpoint through the proxy; the other loopback service refused.
      expect(await read('model.txt')).toBe('200 model\n');
      expect(await read('bystander.txt')).toMatch(/^(403|error)/);
      expect(hits).toEqual(['model /v1/models']);
    },
    90_000,
  );
});
