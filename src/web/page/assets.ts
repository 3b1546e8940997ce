/**
 * What `loopfleet serve` serves for its page, by path: the document at `/`, its stylesheet and its browser
 * modules under `/assets/`. The page is plain modules of the browser's own JavaScript, kept as strings in
 * the compiled package: no bundler, no build step beyond `tsc`, no file read at run time and nothing from a
 * CDN. Every module puts fleet text into the document as text nodes only (see `DOM_JS`).
 */
import { ACTIONS_JS } from './client/actions.js';
import { API_JS } from './client/api.js';
import { APP_JS } from './client/app.js';
import { CHART_JS } from './client/chart.js';
import { DETAIL_JS } from './client/detail.js';
import { DIFF_JS } from './client/diff.js';
import { DOM_JS } from './client/dom.js';
import { FORMAT_JS } from './client/format.js';
import { LIST_JS } from './client/list.js';
import { MARKDOWN_JS } from './client/markdown.js';
import { MODEL_JS } from './client/model.js';
import { indexHtml } from './html.js';
import { PAGE_CSS } from './style.js';

export interface PageAsset {
  /** the Content-Type it is served with */
  type: string;
  body: string;
}

const JS = 'text/javascript; charset=utf-8';

/** The browser modules by file name; each imports the others as `./name.js`. */
export const PAGE_MODULES: Readonly<Record<string, string>> = {
  'actions.js': ACTIONS_JS,
  'api.js': API_JS,
  'app.js': APP_JS,
  'chart.js': CHART_JS,
  'detail.js': DETAIL_JS,
  'diff.js': DIFF_JS,
  'dom.js': DOM_JS,
  'format.js': FORMAT_JS,
  'list.js': LIST_JS,
  'markdown.js': MARKDOWN_JS,
  'model.js': MODEL_JS,
};

export const PAGE_ASSETS: Record<string, PageAsset> = {
  '/': { type: 'text/html; charset=utf-8', body: indexHtml(Object.keys(PAGE_MODULES)) },
  '/assets/page.css': { type: 'text/css; charset=utf-8', body: PAGE_CSS },
  ...Object.fromEntries(Object.entries(PAGE_MODULES).map(([name, body]) => [`/assets/${name}`, { type: JS, body }])),
};
