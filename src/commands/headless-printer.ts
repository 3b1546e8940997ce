import type { FleetEmitter } from '../core/task/events.js';
import { totalTokens } from '../domain/types.js';
import { holdText } from '../core/budget/rate-limits.js';
import { oneLine } from '../domain/sanitize.js';
import { formatTokens, formatUsd } from '../core/text/format-units.js';

/**
 * One plain line per event: what `--overnight` prints. Streamed text and tool calls stay in the transcripts.
 * Reasons, gate reasons and log messages quote agents and check output: every line goes through the one
 * sanitiser as a one-line field, so no escape sequence reaches the terminal and no event prints two lines.
 */
export function printEvents(events: FleetEmitter, print: (line: string) => void): () => void {
  const write = (line: string) => print(oneLine(line));
  const stamp = () => new Date().toISOString().slice(11, 19);
  const onTask: Parameters<typeof events.on<'task'>>[1] = ({ task, previousStatus }) => {
    if (previousStatus === task.status) return; // phase and usage changes: see onPhase
    const extra =
      task.status === 'running'
        ? ` attempt ${task.attempt}/${task.maxAttempts}`
        : task.reason !== null
          ? ` — ${task.reason}`
          : '';
    write(
      `${stamp()} ${task.id} ${task.status}${extra} (${formatTokens(totalTokens(task.usage))} tokens, ${formatUsd(task.costUsd)})`,
    );
  };
  const phases = new Map<string, string>();
  const onPhase: Parameters<typeof events.on<'task'>>[1] = ({ task }) => {
    if (task.status !== 'running' || task.phase === null) return;
    const key = `${task.attempt}:${task.phase}`;
    if (phases.get(task.id) === key) return;
    phases.set(task.id, key);
    write(`${stamp()} ${task.id} ${task.phase} (attempt ${task.attempt})`);
  };
  const onGate: Parameters<typeof events.on<'gate'>>[1] = (g) =>
    write(`${stamp()} ${g.id ?? 'fleet'} gate ${g.gate}: ${g.reason}`);
  const onLog: Parameters<typeof events.on<'log'>>[1] = (l) =>
    write(`${stamp()} ${l.id ?? 'fleet'} ${l.level === 'info' ? '' : `${l.level}: `}${l.message}`);
  const onBacklog: Parameters<typeof events.on<'backlog'>>[1] = (b) => {
    if (b.added.length > 0) write(`${stamp()} backlog: queued ${b.added.join(', ')}`);
    if (b.removed.length > 0) write(`${stamp()} backlog: dropped ${b.removed.join(', ')}`);
  };
  // A hold (a usage or rate limit) is printed when it starts or changes, and its end once.
  let held: string | null = null;
  const onFleet: Parameters<typeof events.on<'fleet'>>[1] = (summary) => {
    const key = summary.hold === undefined ? null : `${summary.hold.reason} ${summary.hold.until}`;
    if (key === held) return;
    if (summary.hold !== undefined) write(`${stamp()} fleet ${holdText(summary.hold, Date.now())}`);
    else if (summary.state !== 'finished' && summary.state !== 'stopping') write(`${stamp()} fleet resumed`);
    held = key;
  };
  events.on('fleet', onFleet);
  events.on('task', onTask);
  events.on('task', onPhase);
  events.on('gate', onGate);
  events.on('log', onLog);
  events.on('backlog', onBacklog);
  return () => {
    events.off('fleet', onFleet);
    events.off('task', onTask);
    events.off('task', onPhase);
    events.off('gate', onGate);
    events.off('log', onLog);
    events.off('backlog', onBacklog);
  };
}
