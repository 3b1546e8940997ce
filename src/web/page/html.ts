/**
 * The page's one HTML document (served at `/`). It holds no text from the fleet, no inline script or
 * style (the server's Content-Security-Policy allows only `'self'`), and loads nothing from another
 * origin: the stylesheet and the modules come from `/assets/`, the empty icon is a `data:` URL. Every
 * module is named for preloading, so the browser fetches them at once rather than import by import.
 */
export function indexHtml(modules: readonly string[]): string {
  const preload = modules.map((name) => `<link rel="modulepreload" href="/assets/${name}">`).join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>loopfleet</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/page.css">
<script type="module" src="/assets/app.js"></script>
${preload}
</head>
<body>
<header id="fleet-bar" class="fleet-bar"><strong>loopfleet</strong> loading…</header>
<div id="banner" class="banner" role="alert" hidden></div>
<nav id="views" class="views" role="tablist">
<button type="button" data-view="tasks" aria-selected="true">tasks</button>
<button type="button" data-view="report" aria-selected="false">report and chart</button>
<span class="hint">j/k select · 1–7 tabs · ? keys</span>
</nav>
<main id="tasks-view" class="tasks-view">
<section class="list" aria-label="tasks">
<div class="list-head" role="row">
<span class="cell c-id">id</span><span class="cell c-status">status · phase</span><span class="cell c-title">title</span><span class="cell c-attempt">try</span><span class="cell c-tests">tests</span><span class="cell c-tokens">tokens</span><span class="cell c-cost">cost</span><span class="cell c-elapsed">time</span><span class="cell c-pr">PR</span>
</div>
<div id="list-viewport" class="list-viewport" role="grid" tabindex="0"></div>
</section>
<section id="detail" class="detail" aria-label="the selected task"></section>
</main>
<section id="report-view" class="report-view" hidden>
<div id="chart"></div>
<article id="report" class="report"></article>
</section>
<footer id="notice" class="notice" role="status"></footer>
<dialog id="confirm" class="confirm">
<form method="dialog">
<p id="confirm-text"></p>
<textarea id="confirm-plan" rows="16" spellcheck="false" hidden></textarea>
<p id="confirm-error" class="confirm-error"></p>
<div class="buttons"><button id="confirm-cancel" type="button" value="cancel">cancel</button><button id="confirm-ok" type="button" value="ok">ok</button></div>
</form>
</dialog>
<dialog id="help" class="help">
<h2>keys</h2>
<table id="help-keys"></table>
<div class="buttons"><button id="help-close" type="button">close</button></div>
</dialog>
</body>
</html>
`;
}
