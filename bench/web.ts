/**
 * 10. The web page at 2,000 tasks: `startWebServer` (the server `loopfleet serve` runs) over a FakeFleet of
 * 2,000 tasks, the page in Debian's chromium through playwright-core.
 *
 * - first screen: from the navigation's start to the page's `loopfleet:first-rows` mark (the session read,
 *   the event stream live, the list fetched and its first screen of rows in the document), each in a fresh
 *   page;
 * - change: from a `task` event emitted by the fleet to the row's status text changing in the page (a
 *   MutationObserver on the row's cell), the two ends taken on the machine's one clock (`timeOrigin + now`
 *   in Node and in the page). It includes the server's gathering window for events.
 */
import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { startWebServer } from '../src/web/server/app.js';
import { PAGE_ASSETS } from '../src/web/page/assets.js';
import { FakeFleet, fakeTasks } from '../test/helpers/fake-fleet.js';
import * as lib from './lib.js';

const CHROMIUM = '/usr/bin/chromium';
const TASKS = lib.quick ? 200 : 2000;
const LOADS = lib.quick ? 1 : 7;
const CHANGES = lib.quick ? 3 : 40;
const TOKEN = 'bench-web-token-0123456789abcdefghij';
const FIRST_SCREEN_GOAL_MS = 1000;
const CHANGE_GOAL_MS = 200;

const wall = () => performance.timeOrigin + performance.now();

if (!existsSync(CHROMIUM)) {
  lib.print(`bench web: ${CHROMIUM} is missing; install Debian's chromium to measure the page`);
  await lib.report([{ figure: '10 web page', value: 'not measured: no chromium', target: '', pass: null }]);
  process.exit(0);
}

const fleet = new FakeFleet({ tasks: fakeTasks(TASKS) });
const server = await startWebServer({
  fleet,
  token: TOKEN,
  readOnly: false,
  host: '127.0.0.1',
  port: 0,
  assets: PAGE_ASSETS,
  latestReport: async () => null,
  onError: (error: Error) => process.stderr.write(`bench web: server error: ${error.message}\n`),
});
const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
try {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  // The first visit trades the token for the cookie; the measured loads open `/` as a person's reload does.
  const login = await context.newPage();
  await login.goto(server.url);
  await login.locator('body[data-ready="true"]').waitFor();
  await login.close();

  const firstScreen: number[] = [];
  /** of each, the part after the document arrived: the page's own work and its API reads */
  const afterDocument: number[] = [];
  let rowsShown = 0;
  for (let i = 0; i < LOADS; i++) {
    const page = await context.newPage();
    await page.goto(`${server.origin}/`);
    await page.locator('body[data-ready="true"]').waitFor();
    const [rows, documentEnd] = (await page.evaluate(
      `[performance.getEntriesByName('loopfleet:first-rows')[0]?.startTime ?? NaN, performance.getEntriesByType('navigation')[0]?.responseEnd ?? NaN]`,
    )) as [number, number];
    firstScreen.push(rows);
    afterDocument.push(rows - documentEnd);
    rowsShown = await page.locator('.row:not([hidden])').count();
    await page.close();
  }

  const page = await context.newPage();
  await page.goto(`${server.origin}/`);
  await page.locator('body[data-ready="true"]').waitFor();
  const visible = (await page.evaluate(
    `[...document.querySelectorAll('.row:not([hidden])')].map((r) => r.dataset.id)`,
  )) as string[];
  const changes: number[] = [];
  for (let i = 0; i < CHANGES; i++) {
    const id = visible[i % Math.min(visible.length, 20)]!;
    const next = fleet.task(id).status === 'running' ? 'verified' : 'running';
    // In the page (a string: bench/ is compiled without the DOM's types): the time the row's status changes.
    await page.evaluate(`(() => {
      const cell = document.querySelector('.row[data-id="${id}"] .c-status');
      if (cell === null) throw new Error('no row ${id} in view');
      window.changed = new Promise((resolve) => {
        const observer = new MutationObserver(() => {
          observer.disconnect();
          resolve(performance.timeOrigin + performance.now());
        });
        observer.observe(cell, { childList: true, characterData: true, subtree: true });
      });
    })()`);
    const emitted = wall();
    fleet.update(id, { status: next, phase: next === 'running' ? 'implement' : null });
    const seen = (await page.evaluate('window.changed')) as number;
    changes.push(seen - emitted);
  }
  await page.close();

  const first = lib.median(firstScreen);
  const change = lib.median(changes);
  const changeP95 = lib.percentile(changes, 95);
  lib.section(`12. the web page at ${TASKS.toLocaleString('en')} tasks (chromium, 1440×900)`);
  lib.print(
    lib.table([
      ['figure', 'median', 'p95', 'max', 'goal', ''],
      [
        `first screen of rows (${rowsShown} rows in the document), ${LOADS} loads`,
        lib.ms(first, 0),
        lib.ms(lib.percentile(firstScreen, 95), 0),
        lib.ms(Math.max(...firstScreen), 0),
        `≤ ${FIRST_SCREEN_GOAL_MS} ms`,
        lib.verdict(first <= FIRST_SCREEN_GOAL_MS),
      ],
      [
        '  of which after the document arrived',
        lib.ms(lib.median(afterDocument), 0),
        lib.ms(lib.percentile(afterDocument, 95), 0),
        lib.ms(Math.max(...afterDocument), 0),
        '',
        '',
      ],
      [
        `task event to row text, ${CHANGES} changes`,
        lib.ms(change),
        lib.ms(changeP95),
        lib.ms(Math.max(...changes)),
        `≤ ${CHANGE_GOAL_MS} ms`,
        lib.verdict(changeP95 <= CHANGE_GOAL_MS),
      ],
    ]),
  );
  await lib.report([
    {
      figure: `10 web first screen, ${TASKS} tasks`,
      value: `${lib.ms(first, 0)} median (${lib.ms(lib.median(afterDocument), 0)} after the document)`,
      target: `≤ ${FIRST_SCREEN_GOAL_MS} ms`,
      pass: first <= FIRST_SCREEN_GOAL_MS,
    },
    {
      figure: `10 web task event to row, ${TASKS} tasks`,
      value: `${lib.ms(change)} median, ${lib.ms(changeP95)} p95`,
      target: `≤ ${CHANGE_GOAL_MS} ms`,
      pass: changeP95 <= CHANGE_GOAL_MS,
    },
  ]);
} finally {
  await browser.close();
  await server.close();
}
