/**
 * 5. Prompt caching: one implementer run of 8 turns (7 with tool calls) through the real
 * AnthropicModelClient and SDK, against the loopback fake Messages API with its simulated caching.
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AnthropicModelClient } from '../src/adapters/model/anthropic-model.js';
import { ExecaRunner } from '../src/adapters/sandbox/execa-runner.js';
import { fsTextFiles, packagedAgentsDir } from '../src/adapters/store/file-store.js';
import { parseBacklog } from '../src/core/backlog/parse.js';
import { loadRoles } from '../src/core/roles/definitions.js';
import { implementerPrompt, systemPrompt } from '../src/core/roles/prompts.js';
import { startModelServer } from '../src/demo/model-server.js';
import { byTurn } from '../src/demo/script-kit.js';
import { addUsage, type Usage, ZERO_USAGE } from '../src/domain/types.js';
import type { AgentEvent } from '../src/ports/model.js';
import * as lib from './lib.js';

const TARGET = 0.6;
/** the Messages API's smallest cacheable prefix for Sonnet models */
const MIN_CACHEABLE = 1024;

const dir = await mkdtemp(join(tmpdir(), 'loopfleet-bench-cache-'));
const server = await startModelServer({
  minCacheableTokens: MIN_CACHEABLE,
  script: byTurn([
    { text: 'Looking at the layout first.', toolUses: [{ name: 'glob', input: { pattern: 'src/**/*.js' } }] },
    { toolUses: [{ name: 'read', input: { file_path: 'src/module-3.js' } }] },
    { toolUses: [{ name: 'grep', input: { pattern: 'return x \\+' } }] },
    { toolUses: [{ name: 'read', input: { file_path: 'src/module-7.js' } }] },
    {
      text: 'Changing module 3.',
      toolUses: [
        {
          name: 'edit',
          input: { file_path: 'src/module-3.js', old_string: 'return x + 3;', new_string: 'return x + 3 + 0;' },
        },
      ],
    },
    {
      toolUses: [
        { name: 'write', input: { file_path: 'src/helper.js', content: 'export const helper = (x) => x;\n' } },
      ],
    },
    { toolUses: [{ name: 'read', input: { file_path: 'src/module-3.js' } }] },
    { text: 'Done: module 3 changed and a helper added.' },
  ]),
});
try {
  for (const [path, content] of Object.entries(lib.sampleFiles())) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  const roles = await loadRoles(fsTextFiles, packagedAgentsDir(), dir);
  const spec = parseBacklog(lib.backlogText('check: npm test', 1), join(dir, 'BACKLOG.md')).backlog.tasks[0]!;
  const plan =
    '1. Find the modules that add a constant.\n2. Change module 3.\n3. Add a helper.\n4. Read the result back.';
  const client = new AnthropicModelClient({
    apiKey: 'bench-key',
    baseURL: server.url,
    processRunner: new ExecaRunner(),
    sandboxAvailable: false,
  });
  let sum: Usage = { ...ZERO_USAGE };
  const tools: string[] = [];
  const t0 = performance.now();
  const result = await client.runAgent(
    {
      role: 'implementer',
      model: 'claude-sonnet-5-5',
      system: systemPrompt('implementer', roles.implementer.prompt),
      prompt: implementerPrompt(spec, 1, 'npm test', plan, null),
      workdir: dir,
      access: 'write',
      shell: false,
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: dir },
      maxTurns: roles.implementer.maxTurns,
      maxTokens: roles.implementer.maxTokens,
      signal: new AbortController().signal,
      beforeCall: () => {},
      timeoutMs: 60_000,
    },
    (event: AgentEvent) => {
      if (event.type === 'usage') sum = addUsage(sum, event.usage);
      if (event.type === 'tool') tools.push(event.name);
    },
  );
  const elapsed = performance.now() - t0;
  const allInput = sum.input + sum.cacheWrite + sum.cacheRead;
  const share = sum.cacheRead / allInput;

  lib.section(
    `5. Prompt caching — one implementer run, real SDK against the loopback fake Messages API (min cacheable prefix ${MIN_CACHEABLE} tokens)`,
  );
  lib.print(
    lib.table([
      ['request', 'input', 'cache write', 'cache read', 'output'],
      ...server.requests.map((r) => [
        String(r.index),
        String(r.usage?.input_tokens ?? 0),
        String(r.usage?.cache_creation_input_tokens ?? 0),
        String(r.usage?.cache_read_input_tokens ?? 0),
        String(r.usage?.output_tokens ?? 0),
      ]),
      ['sum of usage events', String(sum.input), String(sum.cacheWrite), String(sum.cacheRead), String(sum.output)],
    ]),
  );
  lib.print(`${result.turns} turns, tools called: ${tools.join(', ')}; ${lib.ms(elapsed, 0)}`);
  lib.print('');
  lib.print(
    lib.table([
      ['figure', 'value', 'target', ''],
      [
        'cache reads / all input tokens',
        `${(share * 100).toFixed(1)} %`,
        `≥ ${TARGET * 100} %`,
        lib.verdict(share >= TARGET),
      ],
    ]),
  );
  await lib.report([
    {
      figure: `5 cache reads / all input (${result.turns} turns)`,
      value: `${sum.cacheRead} / ${allInput} = ${(share * 100).toFixed(1)} %`,
      target: `≥ ${TARGET * 100} %`,
      pass: share >= TARGET,
    },
  ]);
} finally {
  await server.close();
  await rm(dir, { recursive: true, force: true });
}
