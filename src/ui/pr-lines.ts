import type { TaskState } from '../domain/types.js';
import { prWords } from '../core/report/pr-words.js';
import { singleLine, wrapLine } from './format.js';
import type { ColorName } from './theme.js';

/** The colour of a pull request's few words: red for failing CI, yellow for changes requested, green once merged. */
export function prColor(pr: NonNullable<TaskState['pr']>): ColorName {
  if (pr.state === 'merged') return 'green';
  if (pr.state === 'closed') return 'gray';
  if (pr.ci === 'failing') return 'red';
  if (pr.review === 'changes-requested') return 'yellow';
  return 'cyan';
}

/** The detail pane's pull request section: its words and its URL (the forge's, sanitised); none without a PR. */
export function prLines(task: TaskState, width: number): Array<{ text: string; bold?: boolean; color?: ColorName }> {
  const pr = task.pr;
  if (pr === undefined) return [];
  const lines: Array<{ text: string; bold?: boolean; color?: ColorName }> = [
    { text: 'Pull request', bold: true },
    { text: `  ${prWords(pr)}`, color: prColor(pr) },
  ];
  for (const part of wrapLine(`  ${singleLine(pr.url)}`, width)) lines.push({ text: part });
  return lines;
}
