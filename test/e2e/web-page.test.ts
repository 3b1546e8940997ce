import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { startModelServer, type RunningModelServer } from '../../src/demo/model-server.js';
import type { Script } from '../../src/demo/script-types.js';
import { demoScript, type DemoScenario } from '../../src/demo/scripts.js';
import { backlog } from '../helpers/fleet-harness.js';
import { git, makeRepo } from '../helpers/git-repo.js';
import { UNSAFE } from '../helpers/hostile-text.js';
import { BIN } from '../helpers/paths.js';

/**
 * The page of `loopfleet serve` in a real browser (Debian's chromium through playwright-core) against the
 * built CLI serving a demo fleet on loopback, and the repository checked with git afterwards. One browser
 * and one fleet for the file; the read-only server runs on the same repository once the first has stopped
 * (one fleet per repository).
 */

const KEY = 'sk-ant-web-e2e-0123456789abcdefghijklmnopqrstuvwxyz';
const TOKEN = 'web-page-e2e-token-0123456789abcdef';
const CHROMIUM = '/usr/bin/chromium';

/** What an agent writes to reach the person's browser: markup, a script link, terminal escapes. */
const HOSTILE =
  '<script>alert(1)</script><img src=x onerror=alert(2)>[click](javascript:alert(3)) ' +
  '<a href="javascript:alert(4)">x</a> \u001b]8;;javascript:alert(5)\u0007osc\u001b]8;;\u0007 \u001b[2J\u001b[31mred\u001b[0m \u009b2J';

const SCENARIOS: DemoScenario[] = [
  { taskId: 'T-1', kind: 'pass', edits: [{ path: 'hello.txt', content: 'hello\n' }] },
  { taskId: 'T-2', kind: 'pass', edits: [{ path: 'other.txt', content: 'other\n' }] },
  { taskId: 'T-3', kind: 'pass', edits: [{ path: 'three.txt', content: `three ${HOSTILE}\n` }] },
  { taskId: 'T-4', kind: 'pass', edits: [{ path: 'four.txt', content: 'four\n' }] },
];

const BACKLOG = backlog(
  'check: sh check.sh\nreview: true\nconcurrency: 3\ngates:\n  attempts: 1',
  '- [ ] T-1 Say hello\n- [ ] T-2 Say something else\n- [ ] T-3 Render <img src=x onerror=alert(6)> safely\n' +
    '- [ ] T-4 Say four, once a person approved the plan\n  autonomy: plan',
);

const CHECK =
  'echo "check saw: $(ls *.txt 2>/dev/null | tr "\\n" " ")"\nls hello.txt other.txt three.txt >/dev/null 2>&1 || test -n "$(ls *.txt 2>/dev/null)"\n';

let root = '';
let model: RunningModelServer;
let browser: Browser;
let cleanupRepo: () => Promise<void> = async () => {};
/** the model answers nothing until the page has shown the list, so the page sees the tasks move */
let pageOpen!: () => void;
const opened = new Promise<void>((resolve) => (pageOpen = resolve));

interface Served {
  child: ChildProcess;
  url: string;
  origin: string;
  output: () => string;
  stop: () => Promise<number | null>;
}

async function serve(...args: string[]): Promise<Served> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', ...args], {
    cwd: root,
    env: {
      ...process.env,
      ANTHROPIC_BASE_URL: model.url,
      ANTHROPIC_API_KEY: KEY,
      LOOPFLEET_SERVE_TOKEN: TOKEN,
      NO_COLOR: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      text += chunk.toString();
      const m = /open (http:\/\/127\.0\.0\.1:\d+\/\?token=\S+)/.exec(text);
      if (m !== null) resolve(m[1]!);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then((code) => reject(new Error(`serve exited ${code} before it listened:\n${text}`)));
  });
  return {
    child,
    url,
    origin: new URL(url).origin,
    output: () => text,
    stop: async () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/** A page that fails the test on any console error, page error, CSP violation or dialog. */
async function openPage(context: BrowserContext): Promise<{ page: Page; problems: string[] }> {
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('dialog', (d) => {
    problems.push(`a ${d.type()} dialog fired: ${d.message()}`);
    void d.dismiss();
  });
  return { page, problems };
}

const row = (page: Page, id: string) => page.locator(`.row[data-id="${id}"]`);

async function waitStatus(page: Page, id: string, status: string): Promise<void> {
  await page.locator(`.row[data-id="${id}"][data-status="${status}"]`).waitFor();
}

describe.skipIf(!existsSync(CHROMIUM))('the page of loopfleet serve in a real browser', () => {
  let server: Served;
  let context: BrowserContext;
  let page: Page;
  let problems: string[];

  beforeAll(async () => {
    if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`npm run build\` first`);
    // The browser starts while the repository, the model and the fleet do.
    const launched = chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    const repo = await makeRepo({ 'BACKLOG.md': BACKLOG, 'check.sh': CHECK });
    root = repo.root;
    cleanupRepo = repo.cleanup;
    const script = demoScript(SCENARIOS, { chunkDelayMs: 0, delayMs: 0 });
    const hostile: Script = async (req) => {
      await opened;
      const turn = await script(req);
      return req.taskId === 'T-3' && turn.text !== undefined ? { ...turn, text: `${HOSTILE}\n${turn.text}` } : turn;
    };
    model = await startModelServer({ apiKeys: [KEY], script: hostile });
    [server, browser] = await Promise.all([serve(), launched]);
    context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    ({ page, problems } = await openPage(context));
  });

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await server?.stop();
    await model?.close();
    await cleanupRepo();
  });

  it('refuses a wrong or missing token with 401, and nothing changes', async () => {
    const head = await git(root, 'rev-parse', 'main');
    const anon = await context.request.get(`${server.origin}/api/tasks`);
    expect(anon.status()).toBe(401);
    const wrong = await context.request.get(`${server.origin}/?token=not-the-token`, { maxRedirects: 0 });
    expect(wrong.status()).toBe(401);
    const forged = await context.request.post(`${server.origin}/api/tasks/T-1/merge`, {
      headers: { 'X-Loopfleet-Token': 'not-the-token', 'content-type': 'application/json' },
      data: {},
    });
    expect(forged.status()).toBe(401);
    expect(await forged.json()).toHaveProperty('error');
    const paused = await context.request.post(`${server.origin}/api/pause`, {
      headers: { 'content-type': 'application/json' },
      data: { paused: true },
    });
    expect(paused.status()).toBe(401);
    expect(await git(root, 'rev-parse', 'main')).toBe(head);
  });

  it('fills the list, then follows the tasks as they move', { timeout: 120_000 }, async () => {
    await page.goto(server.url);
    // The token left the address bar for an HttpOnly cookie.
    expect(new URL(page.url()).search).toBe('');
    await page.locator('body[data-ready="true"]').waitFor();
    for (const id of ['T-1', 'T-2', 'T-3', 'T-4']) await row(page, id).waitFor();
    // Nothing has answered yet: every task is queued or running as the page opens.
    expect(await row(page, 'T-1').getAttribute('data-status')).toMatch(/^(queued|running)$/);
    pageOpen();
    for (const id of ['T-1', 'T-2', 'T-3']) await waitStatus(page, id, 'verified');
    await waitStatus(page, 'T-4', 'awaiting-approval');
    await expect.poll(() => page.locator('.count[data-status="verified"]').textContent()).toContain('3 verified');
    expect(await row(page, 'T-1').locator('.c-attempt').textContent()).toBe('1/1');
    // Fleet text is text: the title's markup shows as written.
    expect(await row(page, 'T-3').locator('.title-text').textContent()).toBe(
      'Render <img src=x onerror=alert(6)> safely',
    );
  });

  it("shows a task's diff and check output", async () => {
    await row(page, 'T-1').click();
    await page.locator('#detail[data-loaded="T-1"]').waitFor();
    await page.locator('.tab[data-tab="diff"]').click();
    const file = page.locator('.diff-file', { hasText: 'hello.txt' });
    await file.waitFor();
    expect(await file.locator('.dl.add').allTextContents()).toContain('+hello\n');
    // a file folds
    await file.locator('summary').click();
    expect(await file.getAttribute('open')).toBeNull();
    await page.keyboard.press('4');
    await page.locator('.check-output').first().waitFor();
    expect(await page.locator('.check-output').first().textContent()).toContain('check saw: hello.txt');
    expect(await page.locator('.check .judged').first().textContent()).toBe('passed');
    await page.keyboard.press('5');
    await page.locator('.verdict.pass').waitFor();
  });

  it('refuses an action the task does not allow in the engine’s words', async () => {
    await row(page, 'T-1').click();
    await page.keyboard.press('r');
    await page.locator('#confirm[open]').waitFor();
    await page.locator('#confirm-ok').click();
    await page.locator('#confirm-error .refusal').waitFor();
    expect(await page.locator('#confirm-error').textContent()).toContain(
      'T-1 is verified: only failed, conflict or discarded tasks can be retried',
    );
    await page.locator('#confirm-cancel').click();
    await waitStatus(page, 'T-1', 'verified');
    // The browser logs the refused request itself; that one line is expected, nothing else.
    expect(problems.splice(0)).toEqual([expect.stringMatching(/status of 409 \(Conflict\)/)]);
  });

  it('merges with a confirmation: git has the commit on base and the row turns merged', {
    timeout: 60_000,
  }, async () => {
    const commit = await git(root, 'rev-parse', 'loop/T-1');
    await row(page, 'T-1').click();
    const button = page.locator('#detail button.action[data-action="merge"]');
    await button.click();
    await page.locator('#confirm[open][data-action="merge"]').waitFor();
    expect(await page.locator('#confirm-text').textContent()).toBe('Merge T-1 into base?');
    // Cancel first: nothing is sent.
    await page.locator('#confirm-cancel').click();
    expect(await row(page, 'T-1').getAttribute('data-status')).toBe('verified');
    await button.click();
    await page.locator('#confirm-ok').click();
    await waitStatus(page, 'T-1', 'merged');
    // The dialog closes once the server answered.
    await page.locator('#confirm[open]').waitFor({ state: 'detached' });
    await git(root, 'merge-base', '--is-ancestor', commit, 'main');
    expect(await git(root, 'show', 'main:hello.txt')).toBe('hello');
  });

  it("approves a plan after the person's edit of it", { timeout: 60_000 }, async () => {
    await row(page, 'T-4').click();
    await page.locator('#detail[data-loaded="T-4"]').waitFor();
    await page.keyboard.press('a');
    await page.locator('#confirm[open][data-action="approve"]').waitFor();
    const plan = page.locator('#confirm-plan');
    expect(await plan.inputValue()).toContain('## Plan for T-4');
    await plan.fill(`${await plan.inputValue()}\n\nEdited: keep four.txt to one line.`);
    await page.locator('#confirm-ok').click();
    await page.locator('#confirm[open]').waitFor({ state: 'detached' });
    await waitStatus(page, 'T-4', 'verified');
    await page.keyboard.press('1');
    await page.locator('#detail .markdown', { hasText: 'Edited: keep four.txt to one line.' }).waitFor();
  });

  it('pauses and resumes the fleet behind the same dialog', async () => {
    await page.locator('#fleet-bar button[data-action="pause"]').click();
    await page.locator('#confirm-ok').click();
    await page.locator('#banner:not([hidden])', { hasText: 'paused' }).waitFor();
    await page.locator('#fleet-bar button[data-action="resume"]').click();
    await page.locator('#confirm-ok').click();
    await page.locator('#banner[hidden]').waitFor({ state: 'attached' });
  });

  it('shows hostile agent output as inert text', async () => {
    await row(page, 'T-3').click();
    await page.locator('#detail[data-loaded="T-3"]').waitFor();
    await page.keyboard.press('2');
    const out = page.locator('.live-output');
    await expect.poll(() => out.textContent()).toContain('<script>alert(1)</script>');
    const text = (await out.textContent()) ?? '';
    expect(text).toContain('<img src=x onerror=alert(2)>');
    expect(text).toContain('[click](javascript:alert(3))');
    await page.keyboard.press('3');
    await page.locator('.diff-file', { hasText: 'three.txt' }).waitFor();
    expect(await page.locator('.diff-file .dl.add').first().textContent()).toContain('<script>alert(1)</script>');
    await page.keyboard.press('1');
    await page.locator('#detail .markdown').waitFor();
    // In the page (a string, as this file is compiled without the DOM's types): what the document holds.
    const dom = (await page.evaluate(`({
      scripts: [...document.querySelectorAll('script')].map((s) => s.getAttribute('src')),
      images: document.querySelectorAll('img').length,
      links: [...document.querySelectorAll('a')].map((a) => a.getAttribute('href')),
      handlers: [...document.querySelectorAll('*')].flatMap((e) => [...e.attributes].filter((a) => a.name.startsWith('on')).map((a) => a.name)),
      text: document.body.textContent,
    })`)) as { scripts: string[]; images: number; links: Array<string | null>; handlers: string[]; text: string };
    expect(dom.scripts).toEqual(['/assets/app.js']);
    expect(dom.images).toBe(0);
    expect(dom.links.filter((href) => !/^https?:/.test(href ?? ''))).toEqual([]);
    expect(dom.handlers).toEqual([]);
    expect(UNSAFE.exec(dom.text)).toBeNull();
    expect(problems).toEqual([]);
  });

  it('--read-only offers no action and refuses a forged POST with 403', { timeout: 60_000 }, async () => {
    await page.close();
    expect(problems).toEqual([]);
    expect(await server.stop()).toBe(130);
    const t2 = await git(root, 'rev-parse', 'loop/T-2');
    server = await serve('--read-only');
    const opened2 = await openPage(context);
    page = opened2.page;
    await page.goto(server.url);
    await page.locator('body[data-ready="true"]').waitFor();
    await waitStatus(page, 'T-2', 'verified');
    await row(page, 'T-2').click();
    await page.locator('#detail[data-loaded="T-2"]').waitFor();
    await page.keyboard.press('m');
    expect(await page.locator('button.action, [data-action], #confirm, textarea').count()).toBe(0);
    expect(await page.locator('dialog[open]').count()).toBe(0);
    expect(await page.locator('.read-only').textContent()).toBe('read-only');
    const forged = await page.request.post(`${server.origin}/api/tasks/T-2/merge`, {
      headers: { 'X-Loopfleet-Token': TOKEN, 'content-type': 'application/json' },
      data: {},
    });
    expect(forged.status()).toBe(403);
    await expect(git(root, 'merge-base', '--is-ancestor', t2, 'main')).rejects.toThrow();
    // The first server's stop wrote the morning report; the page renders it and the night's chart.
    await page.keyboard.press('t');
    await page.locator('#report .markdown h2, #report .markdown h1, #report .markdown h3').first().waitFor();
    await page.locator('#chart svg, #chart .empty').first().waitFor();
    expect(opened2.problems).toEqual([]);
  });
});
