import { totalTokens, type AttemptRecord, type FleetConfig, type Role, type TaskState } from '../domain/types.js';
import type { FleetSnapshotSummary } from './events.js';
import { sandboxNotice } from './sandbox-notice.js';

/** The morning report: enough to review the night's work without reading transcripts. Pure text. */

export interface ReportInput {
  repoRoot: string;
  base: string;
  startedAt: string;
  endedAt: string;
  summary: FleetSnapshotSummary;
  tasks: TaskState[];
  /** ids of the tasks this run touched; the others are listed briefly */
  ran: ReadonlySet<string>;
  config: FleetConfig;
  sandboxed: boolean;
  exitCode: number;
}

const OUTCOME_WORD: Record<string, string> = {
  verified: '✔ verified — ready to merge',
  merged: '✓ merged',
  failed: '✗ failed',
  conflict: '⚠ conflict',
  discarded: '⌫ discarded',
  queued: '· not finished',
  running: '▶ running',
};

function tokens(n: number): string {
  return n >= 1_000_000 ? `${(n / 1_000_000).toFixed(2)}M` : n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n);
}

function usd(n: number): string {
  return `$${n.toFixed(n < 1 ? 4 : 2)}`;
}

function firstLines(text: string, n: number): string {
  const lines = text.trim().split('\n');
  return lines.slice(0, n).join('\n') + (lines.length > n ? '\n…' : '');
}

function lastLines(text: string, n: number): string {
  const lines = text.trimEnd().split('\n');
  return (lines.length > n ? '…\n' : '') + lines.slice(-n).join('\n');
}

function roleTable(attempts: AttemptRecord[]): string[] {
  const roles: Role[] = ['explorer', 'implementer', 'verifier'];
  const rows = ['| role | tokens (in / out / cache write / cache read) | cost |', '| --- | --- | --- |'];
  for (const role of roles) {
    let input = 0, output = 0, cw = 0, cr = 0, cost = 0;
    for (const a of attempts) {
      const u = a.usageByRole[role];
      if (u !== undefined) {
        input += u.input; output += u.output; cw += u.cacheWrite; cr += u.cacheRead;
      }
      cost += a.costByRole[role] ?? 0;
    }
    if (input + output + cw + cr === 0) continue;
    rows.push(`| ${role} | ${tokens(input)} / ${tokens(output)} / ${tokens(cw)} / ${tokens(cr)} | ${usd(cost)} |`);
  }
  return rows.length > 2 ? rows : [];
}

function taskSection(task: TaskState, cfg: FleetConfig, base: string): string[] {
  const out = [`## ${task.id} ${task.title}`, ''];
  out.push(`- **Outcome:** ${OUTCOME_WORD[task.status] ?? task.status}${task.reason === null ? '' : ` — ${task.reason}`}`);
  if (task.gate !== null) out.push(`- **Gate:** ${task.gate}`);
  const real = task.attempts.filter((a) => a.n > 0);
  out.push(`- **Attempts:** ${real.length} of ${task.maxAttempts}`);
  out.push(`- **Tokens:** ${tokens(totalTokens(task.usage))} (in ${tokens(task.usage.input)}, out ${tokens(task.usage.output)}, cache write ${tokens(task.usage.cacheWrite)}, cache read ${tokens(task.usage.cacheRead)}) · **Cost:** ${usd(task.costUsd)}`);
  if (task.unpricedModels.length > 0) out.push(`- **Unpriced models** (cost not counted): ${task.unpricedModels.join(', ')}; set \`prices:\` in the front matter`);
  if (task.branch !== null) {
    const next: Partial<Record<TaskState['status'], string>> = {
      verified: `\`loopfleet merge ${task.id}\` or \`loopfleet discard ${task.id}\``,
      // Not the worktree: its content is the agent's, and git run there can run a nested repository's config.
      failed: `\`git diff ${base}...${task.branch}\` shows the work so far; \`loopfleet retry ${task.id}\` or \`loopfleet discard ${task.id}\``,
      conflict: `\`loopfleet retry ${task.id}\` rebases it onto the base and verifies it again; or \`loopfleet discard ${task.id}\``,
    };
    const hint = next[task.status];
    if (hint !== undefined) out.push(`- **Branch:** \`${task.branch}\` — ${hint}`);
  }
  const roles = roleTable(task.attempts);
  if (roles.length > 0) out.push('', ...roles);
  const last = real.at(-1);
  if (last !== undefined) {
    if (last.diffStat) out.push('', '**Diffstat**', '', '```', last.diffStat.trimEnd(), '```');
    if (last.plan) out.push('', '**Plan (summary)**', '', firstLines(last.plan, 12));
    if (last.check) {
      out.push('', `**Check** \`${last.check.command}\` → exit ${last.check.exitCode ?? 'killed'}${last.check.timedOut ? ' (timed out)' : ''} in ${(last.check.durationMs / 1000).toFixed(1)}s`, '', '```', lastLines(last.check.outputTail, 20), '```');
    } else if (cfg.check === null) {
      out.push('', '**Check:** none configured');
    }
    if (last.verdict) {
      out.push('', `**Reviewer:** ${last.verdict.pass ? 'pass' : 'veto'}`, ...last.verdict.reasons.map((r) => `- ${r}`));
    }
    if (last.guard.length > 0) out.push('', '**Guard:**', ...last.guard.map((g) => `- ${g}`));
  }
  if (real.length > 1) {
    out.push('', '**Attempt history**', '');
    for (const a of real) out.push(`${a.n}. ${a.outcome}${a.reason ? ` — ${a.reason}` : ''} (${usd(a.costUsd)})`);
  }
  out.push('');
  return out;
}

export function renderReport(input: ReportInput): string {
  const { summary } = input;
  const c = summary.counts;
  const lines = [
    `# loopfleet report — ${input.endedAt.slice(0, 16).replace('T', ' ')}`,
    '',
    `Repository \`${input.repoRoot}\`, base \`${input.base}\`. Run from ${input.startedAt} to ${input.endedAt}; exit code ${input.exitCode}.`,
    '',
    `**${c.verified} verified · ${c.merged} merged · ${c.failed} failed · ${c.conflict} conflict · ${c.queued} queued · ${c.discarded} discarded** — ` +
      `${tokens(totalTokens(summary.totals.usage))} tokens, ${usd(summary.totals.costUsd)} in all.`,
  ];
  if (summary.stoppedBy !== null) lines.push('', `**The run was stopped by the fleet gate \`${summary.stoppedBy}\`.** Unfinished tasks stay queued for the next run.`);
  const notice = sandboxNotice(input.config.sandbox, input.sandboxed);
  if (notice !== null) lines.push('', `**Unsandboxed:** ${notice}.`);
  lines.push('');
  const ran = input.tasks.filter((t) => input.ran.has(t.id));
  const rest = input.tasks.filter((t) => !input.ran.has(t.id));
  for (const task of ran) lines.push(...taskSection(task, input.config, input.base));
  if (rest.length > 0) {
    lines.push('## Not run this time', '');
    for (const t of rest) lines.push(`- ${t.id} ${t.title} — ${t.status}${t.reason ? ` (${t.reason})` : ''}`);
    lines.push('');
  }
  return lines.join('\n');
}
