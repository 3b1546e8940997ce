/**
 * The screenshots of the web page in docs/images/: the demo fleet (the demo's repository and its scripted
 * model) under `loopfleet serve`, the page in Debian's chromium at 1440×900. Not a benchmark (bench/list.ts
 * does not list it); run after `npm run build`:
 *
 *   node --import ./bench/hooks.ts bench/web-screenshots.ts
 *
 * It writes docs/images/web-fleet.png (the list with a running fleet and a task's diff) and
 * docs/images/web-task.png (a finished task's checks, with counts and the baseline).
 */
import { spawn } from 'node:child_process';
import { mkdir, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { chromium, type Page } from 'playwright-core';
import { makeDemoRepo } from '../src/commands/demo.js';
import { DEMO_SCENARIOS } from '../src/demo/demo-scenarios.js';
import { startModelServer } from '../src/demo/model-server.js';
import { demoScript } from '../src/demo/scripts.js';
import { BIN } from '../test/helpers/paths.js';

const KEY = 'demo-key-not-secret';
const IMAGES = fileURLToPath(new URL('../docs/images/', import.meta.url));

const dir = await makeDemoRepo();
const model = await startModelServer({
  script: demoScript(DEMO_SCENARIOS, { chunkDelayMs: 20, delayMs: 300 }),
  apiKeys: [KEY],
});
const child = spawn(process.execPath, [BIN, 'serve', '--port', '0'], {
  cwd: dir,
  env: { ...process.env, ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: KEY },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
try {
  const url = await new Promise<string>((resolve, reject) => {
    let text = '';
    child.stdout.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const m = /open (http:\/\/\S+\/\?token=\S+)/.exec(text);
      if (m !== null) resolve(m[1]!);
    });
    child.on('exit', (code) => reject(new Error(`serve exited ${code}:\n${text}`)));
  });
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  await page.goto(url);
  await page.locator('body[data-ready="true"]').waitFor();
  await mkdir(IMAGES, { recursive: true });

  // The fleet at work: a verified task's diff beside the list while the others still run.
  await page.locator('.row[data-id="T-1"][data-status="verified"]').waitFor({ timeout: 120_000 });
  await select(page, 'T-1', 'diff');
  await page.screenshot({ path: `${IMAGES}web-fleet.png` });

  // The morning: every task ended; one task's checks, with counts and the checks on base.
  // (a locator, not waitForFunction: the page's Content-Security-Policy refuses the latter's eval)
  await page
    .locator('.row[data-status="running"], .row[data-status="queued"]')
    .first()
    .waitFor({ state: 'detached', timeout: 300_000 });
  await select(page, 'T-5', 'checks');
  await page.screenshot({ path: `${IMAGES}web-task.png` });
  process.stdout.write(`wrote ${IMAGES}web-fleet.png and ${IMAGES}web-task.png\n`);
} finally {
  await browser.close();
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
  await model.close();
  await rm(dir, { recursive: true, force: true });
}

async function select(page: Page, id: string, tab: string): Promise<void> {
  await page.locator(`.row[data-id="${id}"]`).click();
  await page.locator(`#detail[data-loaded="${id}"]`).waitFor();
  await page.locator(`.tab[data-tab="${tab}"]`).click();
}
