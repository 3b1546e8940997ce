/**
 * Lint and type errors, from the tools the project defines: its `lint` script, `tsc --noEmit` when it has a
 * tsconfig.json and TypeScript installed, `ruff check`, `eslint` when installed and no lint script covers it.
 * Output is grouped by the tracked file each line names, whatever the tool's format:
 * `path:line:col …` (ruff, eslint unix, gcc-like), `path(line,col): …` (tsc), or a path alone on a line
 * followed by indented messages (eslint stylish).
 */
import type { Proposal } from './proposal.js';
import { oneLine, outputTail } from './text.js';

export interface LintCommand {
  /** shown in notes and descriptions */
  name: string;
  command: string;
}

export interface ProjectFacts {
  scripts: Record<string, string>;
  hasTsconfig: boolean;
  /** node_modules/.bin/tsc exists in the checkout */
  hasTypescript: boolean;
  hasEslint: boolean;
  /** ruff is on PATH and the project has Python files */
  hasRuff: boolean;
}

export function lintCommands(p: ProjectFacts): LintCommand[] {
  const commands: LintCommand[] = [];
  if (p.scripts.lint !== undefined) commands.push({ name: 'npm run lint', command: 'npm run lint --silent' });
  if (p.hasTsconfig && p.hasTypescript && !/\btsc\b/.test(p.scripts.lint ?? ''))
    commands.push({ name: 'tsc --noEmit', command: 'node_modules/.bin/tsc --noEmit --pretty false' });
  if (p.hasEslint && p.scripts.lint === undefined)
    commands.push({ name: 'eslint', command: 'node_modules/.bin/eslint --format unix .' });
  if (p.hasRuff) commands.push({ name: 'ruff check', command: 'ruff check --output-format concise .' });
  return commands;
}

const LEADING_PATH = /^\s*(?:error\s+|warning\s+)?((?:\/|\.\/)?[\w@.\-+/ ]*?[\w-]\.\w+)(?::\d+|\(\d+,\d+\)|\s*$)/;

/** Lines of `output` grouped by the tracked file they are about, in order of first mention. */
export function lintFindings(output: string, tracked: ReadonlySet<string>, root: string): Map<string, string[]> {
  const byFile = new Map<string, string[]>();
  const prefix = root.endsWith('/') ? root : `${root}/`;
  let current: string | null = null;
  for (const raw of output.split(/\r?\n/)) {
    const line = raw.replace(/\x1b\[[0-9;]*m/g, '');
    const m = LEADING_PATH.exec(line);
    let file = m ? m[1]!.trim() : null;
    if (file !== null && file.startsWith(prefix)) file = file.slice(prefix.length);
    if (file !== null) file = file.replace(/^\.\//, '');
    if (file !== null && tracked.has(file)) {
      current = file;
      const list = byFile.get(file) ?? [];
      const rest = line.trim();
      // A path alone (eslint stylish) heads the indented lines that follow.
      if (rest !== file && rest !== m![1]!.trim()) list.push(rest);
      byFile.set(file, list);
      continue;
    }
    if (current !== null && /^\s+\S/.test(line)) byFile.get(current)!.push(line.trim());
    else if (line.trim() !== '') current = null;
  }
  return byFile;
}

export function lintProposal(file: string, base: string, tools: string[], lines: string[]): Proposal {
  return {
    from: 'lint',
    title: `Fix the lint and type errors in ${oneLine(file)}`,
    source: `lint ${file}`,
    priority: 'normal',
    summary: [
      `${tools.map((t) => `\`${t}\``).join(' and ')} report${tools.length === 1 ? 's' : ''} problems in ${file} on ${base}. Fix them without changing behaviour:`,
    ],
    quoted: outputTail(lines.join('\n'), 40),
    rank: 2,
  };
}

/** A lint command that failed without naming any tracked file. */
export function lintCommandProposal(tool: LintCommand, base: string, output: string): Proposal {
  return {
    from: 'lint',
    title: `Make \`${tool.name}\` pass on ${base}`,
    source: `lint ${tool.name}`,
    priority: 'normal',
    summary: [`\`${tool.name}\` fails on ${base}, and its output names no tracked file. The end of its output:`],
    quoted: outputTail(output, 40),
    rank: 2,
  };
}
