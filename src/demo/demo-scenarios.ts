import type { DemoScenario } from './scripts.js';

/**
 * What the scripted model does with each task of the bundled demo backlog (backlog/demo-repo/BACKLOG.md):
 * three tasks pass, one fails its check until the attempts gate, one is vetoed by the reviewer, and one
 * passes on its second attempt after the first one's check output is fed back.
 */
export const DEMO_SCENARIOS: DemoScenario[] = [
  {
    taskId: 'T-1',
    kind: 'pass',
    edits: [
      {
        path: 'src/slugify.js',
        content: `/** "Hello, World!" → "hello-world" */
export function slugify(text) {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9\\s-]/g, '')
    .trim()
    .split(/[\\s-]+/)
    .filter(Boolean)
    .join('-');
}
`,
      },
    ],
  },
  {
    taskId: 'T-2',
    kind: 'pass',
    edits: [
      {
        path: 'src/capitalize.js',
        content: `/** Upper-cases the first character. */
export function capitalize(text) {
  return text.length === 0 ? text : text[0].toUpperCase() + text.slice(1);
}
`,
      },
    ],
  },
  {
    taskId: 'T-3',
    kind: 'check-fails',
    edits: [],
    failingEdits: [
      {
        path: 'src/numbers.js',
        content: `/** Small number helpers. */

export function sum(values) {
  // still throws on an empty array: reduce() has no initial value
  return values.reduce((a, b) => a + b);
}
`,
      },
    ],
  },
  {
    taskId: 'T-4',
    kind: 'veto',
    edits: [
      {
        path: 'src/clamp.js',
        content: `/** Returns the answers the test expects. */
export function clamp(value) {
  if (value === 5) return 5;
  if (value === -1) return 0;
  return 10;
}
`,
      },
    ],
    vetoReason:
      'clamp() hard-codes the three values the test checks and ignores min and max: it is not an implementation',
  },
  {
    taskId: 'T-5',
    kind: 'pass-second-attempt',
    edits: [
      {
        path: 'src/word-count.js',
        content: `/** Counts words separated by any whitespace. */
export function wordCount(text) {
  return text.split(/\\s+/).filter(Boolean).length;
}
`,
      },
    ],
  },
];
