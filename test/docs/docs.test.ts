import { existsSync, statSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI_OPTIONS, COMMANDS, HELP } from '../../src/cli.js';
import { CONFIG_KEYS, GATE_KEYS } from '../../src/core/backlog/config.js';
import { parseBacklog, TASK_KEYS } from '../../src/core/backlog/parse.js';
import { ROLE_KEYS } from '../../src/core/roles/definitions.js';
import { Command, formatBinding, KEY_BINDINGS } from '../../src/ui/key-bindings.js';
import { ROOT } from '../helpers/paths.js';

/**
 * The documentation — README.md, CONTRIBUTING.md and every page of docs/ — against the code. What it names
 * must exist (paths, files, links and their headings, commands, options, settings, task keys, role keys,
 * keys of the interactive view), and what exists must be documented exactly once as a reference entry.
 *
 * A reference entry is a row of a reference table: a Markdown table whose first header cell names its kind
 * (`command`, `option`, `setting`, `gate`, `task key`, `role key`, `key`). The row's first cell names the
 * entry in backticks: `loopfleet merge <id>`, `--grace T`, `max_files`, `↑` `k`. Every checking function
 * below takes the pages as data, and each is also run on a small planted text to show it catches what it
 * is for.
 */

interface Page {
  /** relative to the repository, with `/` */
  file: string;
  text: string;
}

async function markdownUnder(dir: string): Promise<string[]> {
  const entries = await readdir(path.join(ROOT, dir), { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.md'))
    .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name)).split(path.sep).join('/'))
    .sort();
}

const DOC_PAGES = await markdownUnder('docs');
const PAGES: Page[] = await Promise.all(
  ['README.md', 'CONTRIBUTING.md', ...DOC_PAGES].map(async (file) => ({
    file,
    text: await readFile(path.join(ROOT, file), 'utf8'),
  })),
);

// ---- What exists, from the code ----------------------------------------------------------------------

const OPTIONS = new Map(Object.entries(CLI_OPTIONS).map(([name, o]) => [name, 'short' in o ? o.short : null]));
/** `''` is `loopfleet` itself, with no command: the fleet */
const COMMAND_NAMES: readonly string[] = ['', ...COMMANDS];

/** Each command of the interactive view by the keys that trigger it, as its help overlay prints them. */
function keySet(labels: readonly string[]): string {
  return [...labels].sort().join(' ');
}
const VIEW_KEYS = new Map(Object.values(Command).map((c) => [keySet(KEY_BINDINGS[c].map(formatBinding)), c] as const));
const KEY_LABELS = new Set(Object.values(KEY_BINDINGS).flatMap((bs) => bs.map(formatBinding)));

/**
 * Flags of other programs that the docs name (the agent CLIs, bubblewrap, Docker, git, the benchmark
 * runner): loopfleet accepts none of them, and a backticked flag that is neither one of these nor an option
 * of loopfleet is a mistake.
 */
const FOREIGN_FLAGS: Readonly<Record<string, string>> = {
  '--allowedTools': 'Claude Code',
  '--dangerously-skip-permissions': 'Claude Code',
  '--json-schema': 'Claude Code',
  '--permission-mode': 'Claude Code',
  '--settings': 'Claude Code',
  '--dangerously-bypass-approvals-and-sandbox': 'Codex',
  '--output-schema': 'Codex',
  '--sandbox': 'Codex',
  '--approval-mode': 'Gemini CLI',
  '--bind': 'bubblewrap',
  '--disable-userns': 'bubblewrap',
  '--ro-bind': 'bubblewrap',
  '--cap-add': 'Docker',
  '--privileged': 'Docker',
  '--security-opt': 'Docker',
  '--force-with-lease': 'git',
  '--no-ext-diff': 'git',
  '--quick': 'bench/run.ts',
};

// ---- Reading Markdown ----------------------------------------------------------------------------------

const FENCE = /^(`{3,})[^\n]*\n([\s\S]*?)^\1[ \t]*$/gm;

/** The text without its fenced blocks: headings, links and spans there are examples, not the document's. */
function prose(text: string): string {
  return text.replace(FENCE, '');
}

/** The lines inside fenced blocks. */
function fencedLines(text: string): string[] {
  return [...text.matchAll(FENCE)].flatMap((m) => m[2]!.split('\n'));
}

/** The backticked spans of the prose (tables included). */
function spans(text: string): string[] {
  return [...prose(text).matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!);
}

/** GitHub's anchor for a heading: lower case, punctuation other than `-` and `_` dropped, spaces as `-`. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor of a page: its headings (a repeated one gets `-1`, `-2` as on GitHub) and `<a id>`s. */
function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of prose(text).matchAll(/^#{1,6} (.+)$/gm)) {
    const base = anchorOf(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const m of text.matchAll(/<a id="([^"]+)"><\/a>/g)) out.add(m[1]!);
  return out;
}

interface Table {
  file: string;
  header: string[];
  rows: string[][];
}

function cells(line: string): string[] {
  return line
    .trim()
    .replace(/^\|/, '')
    .replace(/\|$/, '')
    .split(/(?<!\\)\|/)
    .map((c) => c.trim());
}

/** The Markdown tables of the prose: a header row, a `| --- |` row, then rows. */
function tables(page: Page): Table[] {
  const out: Table[] = [];
  const lines = prose(page.text).split('\n');
  for (let i = 0; i + 1 < lines.length; i++) {
    if (!lines[i]!.startsWith('|') || !/^\|[\s:|-]+\|$/.test(lines[i + 1]!.trim())) continue;
    const table: Table = { file: page.file, header: cells(lines[i]!), rows: [] };
    let j = i + 2;
    for (; j < lines.length && lines[j]!.startsWith('|'); j++) table.rows.push(cells(lines[j]!));
    out.push(table);
    i = j - 1;
  }
  return out;
}

// ---- Reference entries -----------------------------------------------------------------------------------

type Kind = 'command' | 'option' | 'setting' | 'gate' | 'task key' | 'role key' | 'key';

/** What one row's first cell names, for a table of that kind. */
function entriesOf(kind: Kind, cell: string): string[] {
  const named = [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
  switch (kind) {
    case 'command':
      return named.flatMap((s) => {
        const m = /^loopfleet(?:\s+([a-z][\w-]*))?(?:\s|$)/.exec(s);
        return m === null ? [`? ${s}`] : [m[1] ?? ''];
      });
    case 'option':
      return named.flatMap((s) => {
        const long = /^--([a-z][\w-]*)/.exec(s);
        if (long !== null) return [long[1]!];
        return /^-[a-z]$/.test(s) ? [] : [`? ${s}`];
      });
    case 'key':
      return [keySet(named)];
    default:
      return named.map((s) => (/^[a-z_]+$/.test(s) ? s : `? ${s}`));
  }
}

/** Each entry of that kind the pages document, with where: `file: row`. */
function referenceEntries(pages: readonly Page[], kind: Kind): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const page of pages) {
    for (const table of tables(page)) {
      if (table.header[0] !== kind) continue;
      for (const row of table.rows) {
        for (const entry of new Set(entriesOf(kind, row[0] ?? ''))) {
          out.set(entry, [...(out.get(entry) ?? []), `${page.file}: ${row[0]}`]);
        }
      }
    }
  }
  return out;
}

/** What exists but has no entry, what has more than one, and entries that name nothing that exists. */
function coverage(known: readonly string[], entries: Map<string, string[]>) {
  return {
    missing: known.filter((k) => !entries.has(k)),
    twice: [...entries].filter(([, where]) => where.length > 1).map(([entry]) => entry),
    unknown: [...entries.keys()].filter((e) => !known.includes(e)),
  };
}

const REFERENCE: ReadonlyArray<[Kind, readonly string[]]> = [
  ['command', COMMAND_NAMES],
  ['option', [...OPTIONS.keys()]],
  ['setting', CONFIG_KEYS],
  ['gate', GATE_KEYS],
  ['task key', TASK_KEYS],
  ['role key', ROLE_KEYS],
  ['key', [...VIEW_KEYS.keys()]],
];

// ---- Names in the prose ------------------------------------------------------------------------------------

/** Command lines the pages show: backticked `loopfleet …` spans and `loopfleet …` in fenced blocks. */
function commandLines(page: Page): string[] {
  const inFences = fencedLines(page.text).flatMap((line) =>
    line
      .replace(/\s#.*$/, '')
      .split(/&&|\|\||[;|]/)
      .map((part) => part.trim().replace(/^\$\s+/, ''))
      .filter((part) => /^loopfleet(\s|$)/.test(part)),
  );
  return [...spans(page.text).filter((s) => /^loopfleet(\s|$)/.test(s)), ...inFences];
}

/** Problems with the commands, options, settings and keys a page names in its prose and examples. */
function namedProblems(page: Page): string[] {
  const problems: string[] = [];
  const option = (flag: string, where: string) => {
    if (!OPTIONS.has(flag.slice(2))) problems.push(`${page.file}: ${where} names ${flag}, not an option of loopfleet`);
  };
  for (const line of commandLines(page)) {
    const command = /^loopfleet\s+([a-z][\w-]*)(?:\s|$)/.exec(line)?.[1];
    if (command !== undefined && !COMMANDS.includes(command as never))
      problems.push(`${page.file}: \`${line}\` names the command '${command}', which loopfleet does not have`);
    for (const m of line.matchAll(/(?:^|[\s[])(--[a-z][\w-]*)/g)) option(m[1]!, `\`${line}\``);
  }
  const keys = new Set<string>([...CONFIG_KEYS, ...TASK_KEYS, ...GATE_KEYS, ...ROLE_KEYS]);
  for (const s of spans(page.text)) {
    const flag = /^(--[a-z][\w-]*)/.exec(s)?.[1];
    if (flag !== undefined && FOREIGN_FLAGS[flag] === undefined) option(flag, `\`${s}\``);
    const key = /^([a-z_]+):$/.exec(s)?.[1];
    if (key !== undefined && !keys.has(key))
      problems.push(`${page.file}: \`${s}\` is not a setting, a task key or a role key`);
    const gate = /^gates\.([a-z_]+)$/.exec(s)?.[1];
    if (gate !== undefined && !(GATE_KEYS as readonly string[]).includes(gate))
      problems.push(`${page.file}: \`${s}\` is not a gate`);
  }
  const text = prose(page.text);
  for (const m of text.matchAll(
    /`([^`\n]+)` (?:in the TUI|in the view|in the interactive view)|press(?:es|ing)? `([^`\n]+)`/gi,
  )) {
    const label = m[1] ?? m[2]!;
    if (!KEY_LABELS.has(label)) problems.push(`${page.file}: \`${label}\` is not a key of the interactive view`);
  }
  return problems;
}

/** Links of a page's prose that lead nowhere: a missing file, or a heading the target page does not have. */
function brokenLinks(page: Page, read: (file: string) => string | null): string[] {
  const broken: string[] = [];
  for (const m of prose(page.text).matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = m[1]!;
    if (/^[a-z]+:/.test(target)) continue;
    const [file, anchor] = target.split('#') as [string, string | undefined];
    const resolved =
      file === '' ? page.file : path.posix.normalize(path.posix.join(path.posix.dirname(page.file), file));
    const text = file === '' ? page.text : read(resolved);
    if (text === null) {
      broken.push(`${page.file}: (${target}): no such file`);
      continue;
    }
    if (anchor !== undefined && !anchorsOf(text).has(anchor)) broken.push(`${page.file}: (${target}): no such heading`);
  }
  return broken;
}

function readRepoFile(file: string): string | null {
  const full = path.join(ROOT, file);
  if (!existsSync(full)) return null;
  return statSync(full).isDirectory() ? '' : (PAGES.find((p) => p.file === file)?.text ?? '');
}

// ---- The tests -----------------------------------------------------------------------------------------------

describe('the documentation', () => {
  it('is README.md, CONTRIBUTING.md and the pages of docs/', () => {
    expect(DOC_PAGES.length).toBeGreaterThanOrEqual(12);
    expect(PAGES.map((p) => p.file)).toContain('CONTRIBUTING.md');
  });

  it('names only repository paths that exist', () => {
    const named = [
      ...new Set(
        PAGES.flatMap((p) => spans(p.text)).filter((s) =>
          /^(src|test|bench|backlog|agents|deploy|docs|\.github|\.ci)\/[\w./-]*$/.test(s),
        ),
      ),
    ];
    expect(named.length).toBeGreaterThan(40);
    expect(named.filter((p) => !existsSync(path.join(ROOT, p)))).toEqual([]);
  });

  it('names only source, test and benchmark files that exist', async () => {
    const present = new Set<string>();
    for (const dir of ['src', 'test', 'bench']) {
      for (const e of await readdir(path.join(ROOT, dir), { withFileTypes: true, recursive: true }))
        if (e.isFile()) present.add(e.name);
    }
    const named = [...new Set(PAGES.flatMap((p) => spans(p.text)).filter((s) => /^[\w-]+(\.test)?\.tsx?$/.test(s)))];
    expect(named.length).toBeGreaterThan(10);
    expect(named.filter((n) => !present.has(n))).toEqual([]);
  });

  it('has links that lead to a file and, when they name one, a heading of it', () => {
    const links = PAGES.flatMap((p) => [...prose(p.text).matchAll(/\]\(([^)\s]+)\)/g)]);
    expect(links.filter((m) => m[1]!.includes('.md#')).length).toBeGreaterThan(40);
    expect(PAGES.flatMap((p) => brokenLinks(p, readRepoFile))).toEqual([]);
  });

  it('names no heading twice at the same level under one parent, on any page', () => {
    const twice: string[] = [];
    for (const page of PAGES) {
      const seen = new Set<string>();
      const parents: string[] = [];
      for (const m of prose(page.text).matchAll(/^(#{1,6}) (.+)$/gm)) {
        const level = m[1]!.length;
        parents.length = level - 1;
        const key = `${page.file}: ${parents.join(' > ')} > ${m[2]!}`;
        if (seen.has(key)) twice.push(key);
        seen.add(key);
        parents[level - 1] = m[2]!;
      }
    }
    expect(twice).toEqual([]);
  });

  it('says no paragraph twice, across all pages', () => {
    const paragraphs = PAGES.flatMap((p) =>
      p.text
        .split(/\n\s*\n/)
        .map((para) => para.trim())
        .filter((para) => para.length > 120),
    );
    expect(paragraphs.filter((p, i) => paragraphs.indexOf(p) !== i)).toEqual([]);
  });

  it('names only commands, options, settings, task keys, role keys and view keys that exist', () => {
    expect(PAGES.flatMap(commandLines).length).toBeGreaterThan(30);
    expect(PAGES.flatMap(namedProblems)).toEqual([]);
  });

  describe.each(REFERENCE)('documents every %s exactly once, in a reference table', (kind, known) => {
    it('each that exists has one entry, and each entry exists', () => {
      expect(known.length).toBeGreaterThan(0);
      expect(coverage(known, referenceEntries(PAGES, kind))).toEqual({ missing: [], twice: [], unknown: [] });
    });
  });

  it('agrees with --help: every command and option is there, and --help names no other', () => {
    for (const command of COMMANDS) expect(HELP).toMatch(new RegExp(`^  loopfleet ${command}\\b`, 'm'));
    for (const [name, short] of OPTIONS) {
      expect(HELP).toContain(`--${name}`);
      if (short !== null) expect(HELP).toContain(`-${short}, --${name}`);
    }
    const inHelp = new Set([...HELP.matchAll(/(?:^|[\s[])--([a-z][\w-]*)/g)].map((m) => m[1]!));
    expect([...inHelp].filter((o) => !OPTIONS.has(o))).toEqual([]);
    const commandsInHelp = [...HELP.matchAll(/^ {2}loopfleet ([a-z][\w-]*)/gm)].map((m) => m[1]!);
    expect(commandsInHelp.filter((c) => !COMMANDS.includes(c as never))).toEqual([]);
  });

  it('its BACKLOG.md reference example parses as written and writes every setting', () => {
    const page = PAGES.find((p) => p.file === 'docs/backlog.md')!.text;
    const example = page.split('## A full example')[1]!.split('```markdown\n')[1]!.split('\n```\n')[0]!;
    const { backlog } = parseBacklog(example, 'BACKLOG.md');
    expect(backlog.tasks.map((t) => t.id)).toEqual(['T-1', 'T-2', 'T-3']);
    expect([backlog.config.land, backlog.config.remote, backlog.config.forge, backlog.config.pr]).toEqual([
      'merge',
      'origin',
      undefined,
      { draft: true, labels: ['loopfleet'], reviewers: [], syncEveryMs: 300_000, allow: [], timeoutMs: 30_000 },
    ]);
    const frontMatter = example.split('\n---\n')[0]!;
    const written = [...frontMatter.matchAll(/^\s*(?:# )?([a-z_]+):/gm)].map((m) => m[1]!);
    expect(CONFIG_KEYS.filter((k) => !written.includes(k))).toEqual([]);
    expect(GATE_KEYS.filter((k) => !written.includes(k))).toEqual([]);
  });

  it('its pull-request settings parse as written', () => {
    const page = PAGES.find((p) => p.file === 'docs/landing-and-pull-requests.md')!.text;
    const yaml = page.split('## Pull requests: `land: pr`')[1]!.split('```yaml\n')[1]!.split('\n```')[0]!;
    const { config } = parseBacklog(`---\ncheck: npm test\n${yaml}\n---\n- [ ] T-1 x\n`, 'BACKLOG.md').backlog;
    expect([config.land, config.remote, config.forge, config.pr?.syncEveryMs]).toEqual([
      'pr',
      'origin',
      'auto',
      300_000,
    ]);
  });
});

describe('the checks catch what they are for (planted pages)', () => {
  const planted = (file: string, text: string): Page => ({ file, text });

  it('a setting documented twice, one missing and one that does not exist', () => {
    const pages = [
      planted('docs/a.md', '| setting | what |\n| --- | --- |\n| `base` | one |\n| `bogus_key` | none |\n'),
      planted('docs/b.md', 'Text.\n\n| setting | default |\n| --- | --- |\n| `base` | again |\n'),
    ];
    const found = coverage(CONFIG_KEYS, referenceEntries(pages, 'setting'));
    expect(found.twice).toEqual(['base']);
    expect(found.unknown).toEqual(['bogus_key']);
    expect(found.missing).toContain('check');
    expect(found.missing).not.toContain('base');
  });

  it('a command, an option and a key of the view, missing, doubled or unknown', () => {
    const page = planted(
      'docs/c.md',
      [
        '| command | what |',
        '| --- | --- |',
        '| `loopfleet merge <id>`, `loopfleet merge --all` | one row, one entry |',
        '| `loopfleet bench` | no such command |',
        '',
        '| option | what |',
        '| --- | --- |',
        '| `--grace T` | once |',
        '| `-h`, `--help` | once |',
        '| `--grace` | twice |',
        '',
        '| key | does |',
        '| --- | --- |',
        '| `↑` `k` | select the previous task |',
        '| `m` `x` | no command has these keys |',
      ].join('\n'),
    );
    const commands = coverage(COMMAND_NAMES, referenceEntries([page], 'command'));
    expect([commands.twice, commands.unknown]).toEqual([[], ['bench']]);
    expect(commands.missing).toContain('discard');
    const options = coverage([...OPTIONS.keys()], referenceEntries([page], 'option'));
    expect([options.twice, options.unknown]).toEqual([['grace'], []]);
    const keys = coverage([...VIEW_KEYS.keys()], referenceEntries([page], 'key'));
    expect(keys.unknown).toEqual(['m x']);
    expect(keys.missing).toContain(keySet(['m']));
    expect(keys.missing).not.toContain(keySet(['↑', 'k']));
  });

  it('a command, an option, a setting and a key that do not exist, named in prose or an example', () => {
    const page = planted(
      'docs/d.md',
      [
        'Run `loopfleet evals` or `loopfleet --overnight --rewind DIR`; set `review_quota:` and `gates.budget`.',
        "Press `Z` to zoom; `--bind` is bubblewrap's, `--frobnicate` is nobody's.",
        '',
        '```sh',
        'cd repo && loopfleet worker --queue redis://h --drain   # a comment --not-an-option',
        '```',
      ].join('\n'),
    );
    expect(namedProblems(page)).toEqual([
      "docs/d.md: `loopfleet evals` names the command 'evals', which loopfleet does not have",
      'docs/d.md: `loopfleet --overnight --rewind DIR` names --rewind, not an option of loopfleet',
      'docs/d.md: `loopfleet worker --queue redis://h --drain` names --drain, not an option of loopfleet',
      'docs/d.md: `review_quota:` is not a setting, a task key or a role key',
      'docs/d.md: `gates.budget` is not a gate',
      'docs/d.md: `--frobnicate` names --frobnicate, not an option of loopfleet',
      'docs/d.md: `Z` is not a key of the interactive view',
    ]);
  });

  it('a link to a missing page, and to a heading its page does not have', () => {
    const target = planted('docs/t.md', '# Title\n\n## A `code` heading: yes\n\n## Twice\n\n## Twice\n');
    const page = planted(
      'docs/l.md',
      '# L\n\n## Here\n\n[ok](#here) [ok](t.md#a-code-heading-yes) [ok](t.md#twice-1) [ok](../README.md)\n' +
        '[bad](#there) [bad](t.md#nope) [bad](gone.md) [ok](https://example.com/x.md#y)\n',
    );
    const read = (file: string) => (file === 'docs/t.md' ? target.text : file === 'README.md' ? '' : null);
    expect(brokenLinks(page, read)).toEqual([
      'docs/l.md: (#there): no such heading',
      'docs/l.md: (t.md#nope): no such heading',
      'docs/l.md: (gone.md): no such file',
    ]);
  });

  it('anchors follow GitHub', () => {
    expect(anchorOf('Discover: `loopfleet discover`')).toBe('discover-loopfleet-discover');
    expect(anchorOf('Notifications: `notify:` and `notify_on:`')).toBe('notifications-notify-and-notify_on');
    expect(anchorOf('Kept alive: `loopfleet --watch`')).toBe('kept-alive-loopfleet---watch');
  });

  it('the role keys read from the parser are its keys', () => {
    expect(ROLE_KEYS).toEqual(expect.arrayContaining(['name', 'model', 'tools', 'max_turns', 'command', 'agent']));
  });
});
