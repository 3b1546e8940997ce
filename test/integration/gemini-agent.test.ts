import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CliAgentClient } from '../../src/adapters/model/cli-agent.js';
import { ExecaRunner } from '../../src/adapters/sandbox/execa-runner.js';
import { startGeminiServer } from '../../src/demo/gemini-server.js';
import type { AgentEvent } from '../../src/ports/model.js';
import { parseVerdict } from '../../src/core/verify/verdict.js';
import { git, makeRepo } from '../helpers/git-repo.js';
import { presetRequest } from '../helpers/preset-request.js';

/**
 * The real Gemini CLI (the pinned @google/gemini-cli) plays the implementer through `agent: gemini`,
 * sandboxed, against a loopback fake of the Gemini API (GOOGLE_GEMINI_BASE_URL), keyed by GEMINI_API_KEY
 * in loopfleet's environment; its auth type chosen in its own ~/.gemini/settings.json, as a user does once.
 */

const GEMINI = path.resolve('node_modules/.bin/gemini');
let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

/** A repository and a CLI-agent client for the real Gemini CLI: its own HOME with the auth type chosen, as a user does once. */
async function geminiClient(baseUrl: string): Promise<{ repo: { root: string }; client: CliAgentClient }> {
  const home = await mkdtemp(path.join(os.tmpdir(), 'lf-gemini-home-'));
  cleanups.push(() => rm(home, { recursive: true, force: true }));
  await mkdir(path.join(home, '.gemini'));
  await writeFile(
    path.join(home, '.gemini', 'settings.json'),
    JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } } }),
  );
  const repo = await makeRepo({ 'README.md': 'x\n' });
  cleanups.push(repo.cleanup);
  const client = new CliAgentClient({
    processRunner: new ExecaRunner(),
    sandboxAvailable: true,
    hostEnv: {
      PATH: process.env.PATH,
      HOME: home,
      GEMINI_API_KEY: 'gemini-test-key',
      GOOGLE_GEMINI_BASE_URL: baseUrl,
      ANTHROPIC_API_KEY: 'not-for-gemini',
    },
  });
  return { repo, client };
}

describe('Gemini CLI as the implementer', () => {
  it('writes with its own tool inside the sandbox and reports its tokens', async () => {
    const server = await startGeminiServer((req) => {
      const tools = Array.isArray(req.body.tools) && req.body.tools.length > 0;
      if (tools && req.calls === 0)
        return { call: { name: 'write_file', args: { file_path: 'gemini.txt', content: 'made by gemini\n' } } };
      return { text: 'Wrote gemini.txt.' };
    }, 50);
    cleanups.push(() => server.close());
    const { repo, client } = await geminiClient(server.url);
    const events: AgentEvent[] = [];
    const request = presetRequest({ preset: 'gemini', bin: GEMINI }, 'implementer', {
      model: 'gemini-2.5-pro',
      prompt: 'Write gemini.txt.',
      workdir: repo.root,
    });
    const result = await client.runAgent(request, (e) => events.push(e));
    expect(await readFile(path.join(repo.root, 'gemini.txt'), 'utf8')).toBe('made by gemini\n');
    expect(result.text).toContain('Wrote gemini.txt.');
    expect(events.find((e) => e.type === 'tool')).toMatchObject({ name: 'write_file' });
    expect(events.find((e) => e.type === 'tool-result')).toMatchObject({ name: 'write_file', isError: false });
    // tokens: what the server reported for the main model, the cached part split out
    const main = server.requests.filter((q) => q.usage !== null && q.path.includes('gemini-2.5-pro'));
    const usage = events
      .filter((e) => e.type === 'usage')
      .reduce(
        (s, e) => ({
          input: s.input + e.usage.input,
          cacheRead: s.cacheRead + e.usage.cacheRead,
          output: s.output + e.usage.output,
        }),
        { input: 0, cacheRead: 0, output: 0 },
      );
    expect(usage.cacheRead).toBe(main.reduce((s, q) => s + q.usage!.cached, 0));
    expect(usage.output).toBeGreaterThan(0);
    expect(server.requests.every((q) => q.keyed)).toBe(true);
  }, 60_000);
});

describe('Gemini CLI as the reviewer', () => {
  it('runs read-only: a write it tries does not reach the worktree, and its verdict is read from its final text', async () => {
    const offered: string[][] = [];
    const server = await startGeminiServer((req) => {
      const tools = Array.isArray(req.body.tools)
        ? (req.body.tools as Array<{ functionDeclarations?: Array<{ name: string }> }>)
        : [];
      const names = tools.flatMap((t) => t.functionDeclarations ?? []).map((d) => d.name);
      if (names.length > 0) offered.push(names);
      // A reviewer that tries to fix what it reviews: its plan mode must refuse the write.
      if (names.length > 0 && req.calls === 0)
        return { call: { name: 'write_file', args: { file_path: 'README.md', content: 'fixed by the reviewer\n' } } };
      return { text: 'I read the diff.\n\n{"pass": false, "reasons": ["the change ignores the empty input case"]}' };
    }, 50);
    cleanups.push(() => server.close());
    const { repo, client } = await geminiClient(server.url);
    const events: AgentEvent[] = [];
    const result = await client.runAgent(
      presetRequest({ preset: 'gemini', bin: GEMINI }, 'verifier', {
        model: 'gemini-2.5-pro',
        prompt: 'Review this diff and answer with the JSON verdict.',
        workdir: repo.root,
      }),
      (e) => events.push(e),
    );
    expect(parseVerdict(result.text)).toEqual({ pass: false, reasons: ['the change ignores the empty input case'] });
    expect(offered.length).toBeGreaterThan(0);
    // It did try (plan mode offers write_file, for its own plan files), and the worktree is untouched.
    expect(events.find((e) => e.type === 'tool')).toMatchObject({ name: 'write_file' });
    expect(await readFile(path.join(repo.root, 'README.md'), 'utf8')).toBe('x\n');
    expect(await git(repo.root, 'status', '--porcelain')).toBe('');
  }, 60_000);
});
