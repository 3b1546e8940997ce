import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startModelServer, type RunningModelServer } from '../../src/demo/model-server.js';
import { HOSTILE, HOSTILE_BACKLOG, hostileScript, unsafeAt } from '../helpers/hostile-text.js';
import { makeRepo, read } from '../helpers/git-repo.js';
import { CLI } from '../helpers/paths.js';

/**
 * Agent text that tries to drive the person's terminal: OSC 52 (writes the clipboard), OSC 0 (the window
 * title), an OSC 8 hyperlink, `ESC[2J` (clears the screen), their 8-bit C1 forms and bidi overrides —
 * in a plan, a check's output, a lesson, a veto reason (the failure reason) and a TODO comment — through
 * the built CLI and a real fleet. Nothing loopfleet prints or writes for a person holds one of those bytes.
 */

const KEY = 'sk-ant-escapes-0123456789abcdefghijklmnopqrstuvwxyz';

let server: RunningModelServer;
let scratch: string;
beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
  server = await startModelServer({ apiKeys: [KEY], script: hostileScript });
  scratch = await mkdtemp(join(tmpdir(), 'loopfleet-escapes-'));
});
afterAll(async () => {
  await server.close();
  await rm(scratch, { recursive: true, force: true });
});

function cli(cwd: string, args: string[]) {
  return execa(process.execPath, [CLI, ...args], {
    cwd,
    reject: false,
    env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: KEY, NO_COLOR: '1' },
    extendEnv: true,
    timeout: 60_000,
  });
}

describe('agent text never reaches a terminal, a Markdown file or a notify payload raw', () => {
  it('headless stdout, status, status --json, the report, lessons.md, the notify payload and a discover proposal', {
    timeout: 90_000,
  }, async () => {
    const notified = join(scratch, 'notify.jsonl');
    const { root, cleanup } = await makeRepo({
      'BACKLOG.md': HOSTILE_BACKLOG(`cat >> ${notified}`),
      'check.sh': 'cat out.txt 2>/dev/null\ntest -f ok.txt\n',
      'src/a.js': `// TODO: fix the parser ${HOSTILE}\n//   more ${HOSTILE}\nexport const a = 1;\n`,
    });
    try {
      const run = await cli(root, ['--overnight']);
      expect.soft(run.stdout).toMatch(/T-1 verified/);
      expect
        .soft(run.stdout)
        .toMatch(/T-2 attempt 1: reviewer veto: bad ⏎ 12:00:00 T-2 verified ␛\]52;c;cHduZWQ=␇␛\]0;PWNED␇/);
      expect.soft(run.stdout).toMatch(/T-2 failed/);
      // A fake event line stays inside the real one.
      expect.soft(run.stdout).not.toMatch(/^12:00:00 T-2 verified/m);
      expect.soft(unsafeAt(run.stdout), 'headless stdout').toBeNull();
      expect.soft(unsafeAt(run.stderr), 'headless stderr').toBeNull();

      const reports = await readdir(join(root, '.loop-worktrees', 'reports'));
      const report = await read(root, `.loop-worktrees/reports/${reports[0]}`);
      expect.soft(report).toContain('␛]0;PWNED␇'); // shown, not acted on
      expect.soft(report).toContain('second line'); // the check's output is there
      expect.soft(unsafeAt(report), 'the report').toBeNull();

      const lessons = await read(root, '.loop-worktrees/lessons.md');
      expect.soft(lessons).toMatch(/T-1 says ␛\]52;/);
      expect.soft(unsafeAt(lessons), 'lessons.md').toBeNull();

      const payloads = (await readFile(notified, 'utf8')).trim().split('\n');
      expect.soft(payloads.some((p) => p.includes('Get vetoed ␛]52;'))).toBe(true);
      for (const p of payloads) {
        expect.soft(unsafeAt(p), 'the notify JSON').toBeNull();
        // What the receiver parses out of it is clean too: it will print it.
        expect.soft(unsafeAt(JSON.stringify(JSON.parse(p))), 'a notify field').toBeNull();
      }

      const status = await cli(root, ['status']);
      expect.soft(status.exitCode).toBe(0);
      expect.soft(status.stdout).toMatch(/T-2 .*Get vetoed ␛\]52;c;cHduZWQ=␇␛\]0;PWNED␇/);
      expect.soft(status.stdout.split('\n')).toHaveLength(3); // the header and one line per task
      expect.soft(unsafeAt(status.stdout), 'status').toBeNull();

      const json = await cli(root, ['status', '--json']);
      expect.soft(json.exitCode).toBe(0);
      expect.soft(json.stdout).toContain('\\u009b2J');
      expect.soft(json.stdout).toContain('\\u202eevil\\u2066');
      expect.soft(unsafeAt(json.stdout), 'status --json').toBeNull();
      // The data is kept: JSON escapes, it does not rewrite.
      const rows = JSON.parse(json.stdout) as Array<{ id: string; title: string }>;
      expect.soft(rows.find((r) => r.id === 'T-2')!.title).toContain(HOSTILE);

      const discover = await cli(root, ['discover', '--only', 'todo']);
      expect.soft(discover.exitCode).toBe(0);
      expect.soft(unsafeAt(discover.stdout), 'discover output').toBeNull();
      // What discover added (T-2's title above it is the person's own line, kept as it is).
      const written = (await read(root, 'BACKLOG.md')).split('## Discovered')[1] ?? '';
      expect.soft(written).toMatch(/fix the parser ␛\]52;c;cHduZWQ=␇/);
      expect.soft(written).toMatch(/^ +TODO: fix the parser ␛\]52;.* more ␛\]52;/m); // the quoted comment
      expect.soft(unsafeAt(written), 'the discovered proposal').toBeNull();
    } finally {
      await cleanup();
    }
  });
});
