/**
 * What the check runs is frozen at base: the package.json scripts the check command reaches, the Makefile
 * or justfile targets it names, files it runs, and test runners' configuration. Everything here is textual
 * and conservative: when in doubt, a change counts as a change of the check.
 */

/** A file as it is on base and after the attempt; null where it does not exist. */
export interface FileVersions {
  path: string;
  base: string | null;
  next: string | null;
}

const RUNNER_CONFIG = [
  /^(?:vitest|vite|jest|playwright|ava|cypress|karma|wdio)\.(?:config|conf|workspace)(?:\.[\w-]+)*\.(?:[cm]?[jt]sx?|json)$/,
  /^vitest\.workspace\.(?:[cm]?[jt]s|json)$/,
  /^\.mocharc(?:\.[\w]+)?$/,
  /^\.(?:nycrc|c8rc|taprc)(?:\.[\w]+)?$/,
  /^(?:pytest\.ini|tox\.ini|conftest\.py|noxfile\.py)$/,
  /^jest\.setup(?:\.[\w-]+)*\.[cm]?[jt]sx?$/,
];
/** package.json keys that configure a test runner */
const RUNNER_KEYS = ['jest', 'ava', 'mocha', 'vitest', 'c8', 'nyc', 'tap'];
/** sections of ini/toml files that configure pytest */
const SECTIONS: Record<string, RegExp> = {
  'pyproject.toml': /^\[tool\.pytest[^\]]*\]/,
  'setup.cfg': /^\[tool:pytest\]/,
};
const MAKEFILES = ['GNUmakefile', 'makefile', 'Makefile'];
const JUSTFILES = ['justfile', 'Justfile', '.justfile'];

/** Simple commands of a shell command line: `a && b | c; d` → [[a], [b], [c], [d]] as words. */
export function simpleCommands(command: string): string[][] {
  return command
    .split(/&&|\|\||[;|\n]/)
    .map((part) =>
      part
        .trim()
        .split(/\s+/)
        .filter((w) => w !== ''),
    )
    .map((words) => {
      let i = 0;
      while (i < words.length && /^[A-Za-z_]\w*=/.test(words[i]!)) i++; // FOO=bar prefixes
      if (words[i] === 'env' || words[i] === 'cross-env' || words[i] === 'exec' || words[i] === 'time') i++;
      while (i < words.length && /^[A-Za-z_]\w*=/.test(words[i]!)) i++;
      return words.slice(i).map((w) => w.replace(/^["']|["']$/g, ''));
    })
    .filter((words) => words.length > 0);
}

const NPM_LIFECYCLE: Record<string, string> = {
  t: 'test',
  tst: 'test',
  test: 'test',
  start: 'start',
  stop: 'stop',
  restart: 'restart',
};
const YARN_BUILTINS = new Set([
  'install',
  'add',
  'remove',
  'upgrade',
  'init',
  'info',
  'list',
  'why',
  'exec',
  'dlx',
  'node',
  'config',
  'cache',
  'workspaces',
  'workspace',
  'install-test',
]);

/** The package.json scripts one simple command runs directly. */
function scriptsOf(words: string[]): string[] {
  const [tool, ...rest] = words;
  const args = rest.filter((w) => !w.startsWith('-'));
  if (tool === 'npm') {
    if (args[0] === 'run' || args[0] === 'run-script' || args[0] === 'rum' || args[0] === 'urn')
      return args[1] ? [args[1]] : [];
    const lifecycle = NPM_LIFECYCLE[args[0] ?? ''];
    return lifecycle ? [lifecycle] : [];
  }
  if (tool === 'yarn' || tool === 'pnpm' || tool === 'bun') {
    if (args[0] === 'run') return args[1] ? [args[1]] : [];
    if (tool === 'bun' && args[0] === 'test') return [];
    return args[0] && !YARN_BUILTINS.has(args[0]) ? [args[0]] : [];
  }
  return [];
}

type Scripts = Record<string, unknown>;

function scriptsIn(pkg: string | null): Scripts | null {
  if (pkg === null) return null;
  try {
    const parsed = JSON.parse(pkg) as { scripts?: unknown };
    return typeof parsed.scripts === 'object' && parsed.scripts !== null ? (parsed.scripts as Scripts) : {};
  } catch {
    return null;
  }
}

/** Every script the check reaches, following `npm run x` inside scripts, with npm's pre/post scripts. */
export function reachedScripts(check: string, ...versions: Array<Scripts | null>): Set<string> {
  const reached = new Set<string>();
  const queue = simpleCommands(check).flatMap(scriptsOf);
  const run = (name: string): void => {
    if (reached.has(name)) return;
    reached.add(name);
    for (const scripts of versions) {
      const body = scripts?.[name];
      if (typeof body === 'string') queue.push(...simpleCommands(body).flatMap(scriptsOf));
    }
  };
  while (queue.length > 0) {
    const name = queue.shift()!;
    run(`pre${name}`);
    run(name);
    run(`post${name}`);
  }
  return reached;
}

/** Words of the check (and of the scripts it reaches) naming files, e.g. `./run-tests.sh`, `scripts/check.js`. */
function filesNamed(texts: string[]): Set<string> {
  const files = new Set<string>();
  for (const text of texts) {
    for (const words of simpleCommands(text)) {
      for (const w of words) {
        if (/^[\w./-]+$/.test(w) && (w.includes('/') || /\.(?:sh|[cm]?[jt]s|py|rb|pl|bash)$/.test(w)))
          files.add(w.replace(/^\.\//, ''));
      }
    }
  }
  return files;
}

/** Rules of a Makefile or justfile: target name → its header and recipe lines; `rest` is everything else. */
function rules(text: string, just: boolean): { order: string[]; blocks: Map<string, string>; rest: string } {
  const header = just ? /^@?([A-Za-z0-9_-]+)(?:\s[^:]*)?:(?!=)/ : /^([^\s:#=][^:=]*?)\s*::?(?!=)/;
  const blocks = new Map<string, string>();
  const order: string[] = [];
  const rest: string[] = [];
  let names: string[] = [];
  let body: string[] = [];
  const flush = () => {
    for (const name of names) blocks.set(name, `${blocks.get(name) ?? ''}${body.join('\n')}\n`);
    names = [];
    body = [];
  };
  for (const line of text.split('\n')) {
    const m = /^\s/.test(line) ? null : header.exec(line);
    if (m !== null) {
      flush();
      names = m[1]!.trim().split(/\s+/);
      for (const name of names) if (!blocks.has(name) && !order.includes(name)) order.push(name);
      body = [line];
    } else if (names.length > 0 && (/^\s/.test(line) || line.trim() === '')) {
      body.push(line);
    } else {
      flush();
      rest.push(line);
    }
  }
  flush();
  return { order: order.filter((n) => !n.startsWith('.')), blocks, rest: rest.join('\n') };
}

/** Targets a rule header depends on: `test: build lint` → build, lint. */
function prerequisites(block: string, just: boolean): string[] {
  const first = block.split('\n')[0] ?? '';
  const after = first.slice(first.indexOf(':') + 1).replace(/[;#].*$/, '');
  return after.split(/\s+/).filter((w) => w !== '' && (just || !w.includes('$')));
}

function targetRules(file: FileVersions, targets: string[], check: string, just: boolean): string[] {
  const base = rules(file.base ?? '', just);
  const next = rules(file.next ?? '', just);
  const wanted = targets.length > 0 ? targets : base.order.slice(0, 1);
  const seen = new Set<string>();
  const queue = [...wanted];
  const reasons: string[] = [];
  while (queue.length > 0) {
    const name = queue.shift()!;
    if (seen.has(name)) continue;
    seen.add(name);
    const before = base.blocks.get(name);
    const after = next.blocks.get(name);
    if (before !== after) reasons.push(`guard: ${file.path} target ${name} changed — the check \`${check}\` runs it`);
    queue.push(...prerequisites(before ?? '', just), ...prerequisites(after ?? '', just));
  }
  if (base.rest !== next.rest)
    reasons.push(`guard: ${file.path} changed outside its targets — the check \`${check}\` reads it`);
  return reasons;
}

function section(text: string | null, header: RegExp): string {
  if (text === null) return '';
  const out: string[] = [];
  let inside = false;
  for (const line of text.split('\n')) {
    if (/^\s*\[/.test(line)) inside = header.test(line.trim());
    if (inside) out.push(line);
  }
  return out.join('\n');
}

function runnerKeys(pkg: string | null): string {
  if (pkg === null) return '';
  try {
    const parsed = JSON.parse(pkg) as Record<string, unknown>;
    return JSON.stringify(RUNNER_KEYS.map((k) => parsed[k] ?? null));
  } catch {
    return pkg;
  }
}

/**
 * Reasons the attempt changed what `check` runs. `files` holds, for each changed path this module asks
 * about (see `definitionFiles`), its base and new text.
 */
export function checkDefinitionRules(
  check: string | null,
  changed: readonly string[],
  files: ReadonlyMap<string, FileVersions>,
): string[] {
  if (check === null) return [];
  const reasons: string[] = [];
  const pkg = files.get('package.json');
  const baseScripts = scriptsIn(pkg?.base ?? null);
  const nextScripts = scriptsIn(pkg?.next ?? null);
  const reached = reachedScripts(check, baseScripts, nextScripts);
  const bodies = [
    check,
    ...[...reached]
      .flatMap((n) => [baseScripts?.[n], nextScripts?.[n]])
      .filter((b): b is string => typeof b === 'string'),
  ];
  if (pkg !== undefined) {
    for (const name of reached) {
      if (JSON.stringify(baseScripts?.[name] ?? null) !== JSON.stringify(nextScripts?.[name] ?? null)) {
        reasons.push(`guard: package.json scripts.${name} changed — the check \`${check}\` runs it`);
      }
    }
    if (runnerKeys(pkg.base) !== runnerKeys(pkg.next))
      reasons.push(
        `guard: package.json test runner settings (${RUNNER_KEYS.join(', ')}) changed — they decide what the check runs`,
      );
  }
  const usesTsc = bodies.some((b) => /\btsc\b|\bvue-tsc\b/.test(b));
  const named = filesNamed(bodies);
  const commands = bodies.flatMap(simpleCommands);
  for (const path of changed) {
    const name = path.split('/').at(-1)!;
    if (RUNNER_CONFIG.some((re) => re.test(name)) || (usesTsc && /^tsconfig.*\.json$/.test(name))) {
      reasons.push(`guard: ${path} changed — a test runner's configuration decides what the check runs`);
    } else if (SECTIONS[path] !== undefined) {
      const v = files.get(path);
      if (v !== undefined && section(v.base, SECTIONS[path]) !== section(v.next, SECTIONS[path])) {
        reasons.push(`guard: ${path} pytest settings changed — they decide what the check runs`);
      }
    } else if (named.has(path)) {
      reasons.push(`guard: ${path} changed — the check \`${check}\` runs it`);
    }
  }
  for (const [list, just, tools] of [
    [MAKEFILES, false, ['make', 'gmake']],
    [JUSTFILES, true, ['just']],
  ] as const) {
    const uses = commands.filter((w) => (tools as readonly string[]).includes(w[0]!));
    if (uses.length === 0) continue;
    const file = list.map((n) => files.get(n)).find((f) => f !== undefined);
    if (file === undefined) continue;
    const targets = uses.flatMap((w) => w.slice(1).filter((a) => !a.startsWith('-') && !a.includes('=')));
    reasons.push(...targetRules(file, targets, check, just));
  }
  return [...new Set(reasons)];
}

/** The changed paths whose base and new text `checkDefinitionRules` needs. */
export function definitionFiles(changed: readonly string[]): string[] {
  return changed.filter(
    (p) => p === 'package.json' || SECTIONS[p] !== undefined || MAKEFILES.includes(p) || JUSTFILES.includes(p),
  );
}
