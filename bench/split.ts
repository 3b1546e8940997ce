/**
 * 10. A large task split into parts against the same work as one task, through the real engine (real git,
 * processes, state, the merge queue) with a scripted model whose implementer takes `LATENCY_MS` per file it
 * changes, and the explorer and reviewer `LATENCY_MS` per call. Six parts: five on files of their own, the
 * sixth sharing the fifth's file (so it lands after it); two disjoint ones in quick mode. Reports the parts, how many ran at once, the
 * conflicts met at landing and the wall times, from the same figures the morning report gives.
 */
import { writeFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { findRepo } from '../src/commands/repo.js';
import { openSession } from '../src/commands/session.js';
import { taskOf } from '../src/core/roles/marker.js';
import { splitFigures } from '../src/core/report/split-figures.js';
import type { AgentEvent, AgentRequest, AgentResult, ModelClient } from '../src/ports/model.js';
import * as lib from './lib.js';

const LATENCY_MS = lib.quick ? 10 : 400;
const CONCURRENCY = 4;
/** the parts' files: the last part shares the one before it's file */
const FILES = lib.quick
  ? [['src/module-0.js'], ['src/module-1.js']]
  : [
      ['src/module-0.js'],
      ['src/module-1.js'],
      ['src/module-2.js'],
      ['src/module-3.js'],
      ['src/module-4.js'],
      ['src/module-4.js'],
    ];

/** the file the last part changes: its last lines on main show the landing order */
const LAST = FILES.at(-1)![0]!;

/** The scripted model: the implementer's time grows with the files it changes; each change appends a line. */
class WorkModel implements ModelClient {
  async runAgent(request: AgentRequest, onEvent: (event: AgentEvent) => void): Promise<AgentResult> {
    request.beforeCall();
    const task = taskOf(request.prompt) ?? '?';
    const part = /^T-1\.(\d+)$/.exec(task);
    const files = part !== null ? FILES[Number(part[1]) - 1]! : FILES.flat();
    const calls = request.role === 'implementer' ? files.length : 1;
    await new Promise((resolve) => setTimeout(resolve, LATENCY_MS * calls));
    if (request.signal.aborted) throw request.signal.reason;
    onEvent({ type: 'usage', model: request.model, usage: { input: 1200, output: 150, cacheWrite: 0, cacheRead: 0 } });
    if (request.role === 'implementer')
      for (const file of files) {
        const path = join(request.workdir, file);
        await writeFile(path, `${await readFile(path, 'utf8')}// ${task}\n`);
      }
    const parts = FILES.map((f, i) => ({ title: `Change ${f.join(', ')} (${i + 1})`, files: f }));
    const text =
      request.role === 'verifier'
        ? '{"pass":true,"reasons":["done"]}'
        : request.role === 'explorer' && task === 'T-1' && request.prompt.includes('tagged `parts`')
          ? `Split.\n\n\`\`\`parts\n${JSON.stringify(parts)}\n\`\`\`\n`
          : `${request.role} done\n\n\`\`\`files\n${files.join('\n')}\n\`\`\`\n`;
    onEvent({ type: 'text', text });
    return { text, turns: 1, stopReason: 'end_turn' };
  }
}

async function run(split: boolean) {
  const repo = await lib.makeRepo({
    ...lib.sampleFiles(),
    'BACKLOG.md': `---\nconcurrency: ${CONCURRENCY}\ncheck: "true"\nreview: true\nautonomy: auto\n---\n\n- [ ] T-1 Change the modules\n${split ? '  split: auto\n' : ''}`,
  });
  try {
    const model = new WorkModel();
    const t0 = performance.now();
    const session = await openSession(await findRepo(repo.root), {
      overrides: {},
      autoMerge: false,
      watch: false,
      env: lib.sessionEnv(),
      services: (s) => ({ ...s, model, cliModel: model }),
    });
    session.fleet.start();
    await session.fleet.whenIdle();
    const wallMs = performance.now() - t0;
    const task = session.fleet.task('T-1')!;
    const figures = splitFigures(task, (id) => session.fleet.task(id), Date.now());
    const landed = await lib.git(repo.root, 'show', `main:${LAST}`);
    await session.close();
    return { wallMs, status: task.status, figures, landed };
  } finally {
    await repo.cleanup();
  }
}

// Quick mode only asks whether the split runs to the end: the one-task run, a plain fleet run, is left out.
const one = lib.quick ? null : await run(false);
const split = await run(true);
const f = split.figures;
lib.section(
  `10. A task split into ${FILES.length} parts against one task — concurrency ${CONCURRENCY}, model ${LATENCY_MS} ms per call (the implementer's per file), check "true", review on, autonomy auto`,
);
lib.print(
  lib.table([
    ['run', 'outcome', 'parts', 'ran at once', 'conflicts at landing', 'wall time'],
    ['one task', one?.status ?? '(not run)', '—', '1', '0', one === null ? '—' : lib.ms(one.wallMs, 0)],
    [
      'split: auto',
      split.status,
      String(f?.parts ?? 0),
      String(f?.atOnce ?? 0),
      String(f?.conflicts ?? 0),
      lib.ms(split.wallMs, 0),
    ],
  ]),
);
lib.print(
  `the parts' attempts one after another: ${lib.ms(f?.serialMs ?? 0, 0)}; ${LAST} on main ends with: ${split.landed.trim().split('\n').slice(-2).join(' | ')}`,
);
await lib.report([
  {
    figure: `10 split task (${FILES.length} parts) against one task, wall time`,
    value: `${lib.ms(split.wallMs, 0)} against ${one === null ? '—' : `${lib.ms(one.wallMs, 0)} (${lib.ratio(split.wallMs / one.wallMs)})`}; ${f?.atOnce ?? 0} at once; ${f?.conflicts ?? 0} conflicts`,
    target: 'no conflict',
    pass: split.status === 'merged' && (f?.conflicts ?? 1) === 0,
  },
]);
