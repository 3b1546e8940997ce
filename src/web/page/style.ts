/** The page's stylesheet (served as `/assets/page.css`): a dark, dense, wide-screen layout. */
export const PAGE_CSS = `
:root {
  --bg: #0f1115; --panel: #161a20; --line: #262c35; --text: #d6dae0; --dim: #8a93a0;
  --cyan: #56c8d8; --green: #6cc070; --red: #e06c6c; --yellow: #e0b050; --blue: #6f9ee8; --magenta: #c47fd5;
  font: 13px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  color-scheme: dark;
}
* { box-sizing: border-box; }
html, body { height: 100%; margin: 0; }
body { background: var(--bg); color: var(--text); display: flex; flex-direction: column; overflow: hidden; }
button { font: inherit; color: var(--text); background: #222833; border: 1px solid #3a4350; border-radius: 4px; padding: 2px 10px; cursor: pointer; }
button:hover { border-color: var(--cyan); }
button:disabled { opacity: .5; cursor: default; }
a.url { color: var(--cyan); }
.dim { color: var(--dim); }
.fleet-bar { display: flex; flex-wrap: wrap; gap: 6px 22px; align-items: center; padding: 8px 14px; background: var(--panel); border-bottom: 1px solid var(--line); }
.state { font-weight: bold; }
.st-running { color: var(--cyan); } .st-paused, .st-stopping { color: var(--yellow); } .st-finished { color: var(--green); } .st-idle { color: var(--dim); }
.bar-info { display: flex; flex-wrap: wrap; gap: 6px 22px; align-items: center; }
.counts { display: flex; gap: 14px; }
.gauges { display: flex; gap: 18px; }
.fleet-actions { margin-left: auto; display: flex; gap: 8px; }
.read-only { margin-left: auto; color: var(--yellow); border: 1px solid var(--yellow); border-radius: 4px; padding: 0 8px; }
.banner { padding: 6px 14px; background: #3a3018; color: var(--yellow); border-bottom: 1px solid #5a4a20; }
.views { display: flex; gap: 6px; align-items: center; padding: 6px 14px; border-bottom: 1px solid var(--line); }
.views button[aria-selected="true"] { border-color: var(--cyan); color: var(--cyan); }
.views .hint { margin-left: auto; color: var(--dim); }
.tasks-view { flex: 1; display: grid; grid-template-columns: minmax(0, 68fr) minmax(0, 32fr); min-height: 0; }
.tasks-view[hidden], .report-view[hidden] { display: none; }
.list { display: flex; flex-direction: column; min-height: 0; border-right: 1px solid var(--line); }
.list-head, .row { display: grid; grid-template-columns: 52px 176px minmax(140px, 1fr) 36px 96px 84px 92px 58px 72px; align-items: center; gap: 0 8px; padding: 0 12px; }
.list-head { color: var(--dim); border-bottom: 1px solid var(--line); height: 28px; overflow-y: hidden; scrollbar-gutter: stable; }
.list-viewport { flex: 1; overflow-y: auto; scrollbar-gutter: stable; position: relative; outline: none; }
.spacer { width: 1px; }
.rows { position: absolute; top: 0; left: 0; right: 0; }
.row { position: absolute; left: 0; right: 0; height: 28px; border-bottom: 1px solid #1b2027; cursor: pointer; white-space: nowrap; }
.row:hover { background: #1a1f27; }
.row.selected { background: #1d2a36; box-shadow: inset 3px 0 var(--cyan); }
.cell { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.c-tokens, .c-cost, .c-elapsed { text-align: right; }
.note { color: var(--dim); }
.note.warn { color: var(--yellow); } .note.bad, .bad { color: var(--red); }
.meter { margin-left: 4px; } .meter.under { color: var(--green); } .meter.near { color: var(--yellow); } .meter.over { color: var(--red); }
.s-queued, .s-discarded { color: var(--dim); } .s-running { color: var(--cyan); } .s-awaiting-approval { color: var(--magenta); }
.s-verified { color: var(--green); } .s-merged { color: var(--blue); } .s-failed { color: var(--red); } .s-conflict { color: var(--yellow); }
.detail { display: flex; flex-direction: column; min-height: 0; padding: 10px 14px; }
.detail-head h2 { font-size: 15px; margin: 0 0 4px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.detail-id { color: var(--cyan); }
.facts { display: flex; flex-wrap: wrap; gap: 4px 16px; color: var(--dim); }
.reason { color: var(--red); margin: 4px 0; }
.branch { color: var(--dim); }
.actions { display: flex; gap: 8px; margin: 8px 0 2px; }
.action { border-color: #4a5563; }
.action[data-action="merge"], .action[data-action="approve"] { border-color: var(--green); color: var(--green); }
.action[data-action="discard"] { border-color: var(--red); color: var(--red); }
.tabs { display: flex; flex-wrap: wrap; gap: 0; margin: 10px 0 0; border-bottom: 1px solid var(--line); }
.tab { border: none; border-radius: 4px 4px 0 0; background: transparent; color: var(--dim); padding: 2px 7px; }
.tab[aria-selected="true"] { background: var(--panel); color: var(--text); box-shadow: inset 0 -2px var(--cyan); }
.detail-body { flex: 1; overflow: auto; padding: 10px 2px; min-height: 0; }
.empty { color: var(--dim); }
.error, .refusal { color: var(--red); }
pre { margin: 0; white-space: pre-wrap; word-break: break-word; }
.live-output { white-space: pre-wrap; }
.o-tool { color: var(--magenta); } .o-phase { color: var(--dim); }
.diff-file { border: 1px solid var(--line); border-radius: 4px; margin-bottom: 8px; }
.diff-name { padding: 4px 8px; background: var(--panel); cursor: pointer; }
.diff-name .add { color: var(--green); } .diff-name .del { color: var(--red); }
.diff-body { padding: 4px 0; overflow-x: auto; white-space: pre; }
.dl { display: block; padding: 0 8px; }
.dl.add { color: var(--green); background: #16261a; } .dl.del { color: var(--red); background: #2a1717; }
.dl.hunk { color: var(--cyan); } .dl.meta { color: var(--dim); font-weight: bold; }
.check { border: 1px solid var(--line); border-radius: 4px; padding: 6px 8px; margin-bottom: 8px; }
.check-head { display: flex; flex-wrap: wrap; gap: 4px 12px; align-items: baseline; }
.judged { font-weight: bold; } .j-passed { color: var(--green); } .j-failed { color: var(--red); } .j-warning, .j-not-worse { color: var(--yellow); }
.check-output { margin-top: 6px; padding: 6px; background: #0b0d10; max-height: 320px; overflow: auto; }
.baseline { color: var(--dim); margin-top: 4px; }
.verdict.pass .verdict-word { color: var(--green); } .verdict.veto .verdict-word { color: var(--red); }
table { border-collapse: collapse; }
th, td { text-align: left; padding: 2px 10px 2px 0; vertical-align: top; }
.history th { color: var(--dim); }
.o-verified { color: var(--green); } .o-check-failed, .o-error, .o-setup-failed { color: var(--red); } .o-vetoed, .o-guard-failed { color: var(--yellow); }
.report-view { flex: 1; overflow: auto; padding: 12px 18px; }
.report { max-width: 1100px; }
.markdown h2, .markdown h3, .markdown h4 { margin: 14px 0 6px; }
.markdown code { background: #1c2129; padding: 0 3px; border-radius: 3px; }
.markdown pre.code { background: #0b0d10; padding: 8px; border-radius: 4px; }
.md-table td, .md-table th { border-bottom: 1px solid var(--line); }
.chart { margin: 0 0 16px; max-width: 1100px; }
.chart-svg { width: 100%; height: auto; background: var(--panel); border: 1px solid var(--line); border-radius: 4px; }
.chart .axis { stroke: var(--line); }
.chart .cost-area { fill: rgba(224, 176, 80, .15); stroke: none; }
.chart .cost-line { fill: none; stroke: var(--yellow); stroke-width: 2; }
.chart .done-line { fill: none; stroke: var(--green); stroke-width: 2; }
.chart .label { fill: var(--dim); font-size: 11px; } .chart .label.cost { fill: var(--yellow); } .chart .label.done { fill: var(--green); }
.legend { display: flex; gap: 18px; margin-top: 4px; color: var(--dim); }
.legend .cost { color: var(--yellow); } .legend .done { color: var(--green); }
.notice { padding: 4px 14px; min-height: 26px; border-top: 1px solid var(--line); background: var(--panel); color: var(--dim); }
.notice.done { color: var(--green); }
dialog { background: var(--panel); color: var(--text); border: 1px solid #3a4350; border-radius: 6px; min-width: 460px; max-width: 80vw; }
dialog::backdrop { background: rgba(0, 0, 0, .55); }
dialog textarea { width: 70vw; max-width: 100%; font: inherit; background: #0b0d10; color: var(--text); border: 1px solid var(--line); }
.confirm-error { min-height: 1.4em; }
.buttons { display: flex; justify-content: flex-end; gap: 8px; }
#confirm-ok { border-color: var(--cyan); color: var(--cyan); }
.help .keys { color: var(--cyan); white-space: nowrap; }
`;
