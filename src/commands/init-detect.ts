/**
 * What a repository declares about building and testing itself, read for `loopfleet init`: the `check:`
 * and `setup:` it proposes, each with where it came from. Only what the project's own files say is used
 * (manifests, lockfiles, a Makefile, an AGENTS.md or CLAUDE.md): nothing is run, nothing guessed from
 * file extensions. The first ecosystem that names a test command gives `check`; `setup` comes from the
 * same ecosystem when it has one, else from the first that does.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface Proposal {
  command: string;
  /** where it came from, for the comment written after it (`package.json scripts.test`) */
  source: string;
}

export interface ProjectCommands {
  check: Proposal | null;
  setup: Proposal | null;
}

interface Found {
  check?: Proposal;
  setup?: Proposal;
}

async function text(root: string, file: string): Promise<string | null> {
  try {
    return await readFile(join(root, file), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'EISDIR')
      return null;
    throw error;
  }
}

/** npm's placeholder for a package without tests */
const NO_TEST = /no test specified/;

const LOCKFILES: Array<[string, string, string]> = [
  ['package-lock.json', 'npm', 'npm ci'],
  ['npm-shrinkwrap.json', 'npm', 'npm ci'],
  ['pnpm-lock.yaml', 'pnpm', 'pnpm install --frozen-lockfile'],
  ['yarn.lock', 'yarn', 'yarn install --frozen-lockfile'],
  ['bun.lockb', 'bun', 'bun install'],
  ['bun.lock', 'bun', 'bun install'],
];

async function node(root: string): Promise<Found | null> {
  const raw = await text(root, 'package.json');
  if (raw === null) return null;
  let pkg: { scripts?: Record<string, unknown>; packageManager?: unknown };
  try {
    pkg = JSON.parse(raw) as typeof pkg;
  } catch {
    return null; // not a manifest a package manager could use either
  }
  let manager: string | null = null;
  let setup: Proposal | undefined;
  for (const [file, pm, command] of LOCKFILES) {
    if ((await text(root, file)) !== null) {
      manager = pm;
      setup = { command, source: file };
      break;
    }
  }
  const declared =
    typeof pkg.packageManager === 'string' ? (/^(npm|pnpm|yarn|bun)@/.exec(pkg.packageManager)?.[1] ?? null) : null;
  if (setup === undefined) {
    manager = declared ?? 'npm';
    const npmrc = (await text(root, '.npmrc')) ?? '';
    const why = /^\s*package-lock\s*=\s*false\s*$/m.test(npmrc)
      ? 'no lockfile (.npmrc: package-lock=false)'
      : declared !== null
        ? `no lockfile; package.json packageManager: ${String(pkg.packageManager)}`
        : 'package.json, no lockfile';
    setup = { command: `${manager} install`, source: why };
  }
  const test = pkg.scripts?.['test'];
  const found: Found = { setup };
  if (typeof test === 'string' && test.trim() !== '' && !NO_TEST.test(test))
    found.check = { command: `${manager} test`, source: 'package.json scripts.test' };
  return found;
}

async function python(root: string): Promise<Found | null> {
  const pyproject = await text(root, 'pyproject.toml');
  const toxIni = await text(root, 'tox.ini');
  if (pyproject === null && toxIni === null) return null;
  const py = pyproject ?? '';
  const found: Found = {};
  if (toxIni !== null) found.check = { command: 'tox', source: 'tox.ini' };
  else if (/^\[tool\.tox\]/m.test(py)) found.check = { command: 'tox', source: 'pyproject.toml [tool.tox]' };
  else if (/^\[tool\.hatch\.envs\.[^\]]+\.scripts\][^[]*^test\s*=/ms.test(py))
    found.check = { command: 'hatch run test', source: 'pyproject.toml hatch scripts.test' };
  else if (/^\[tool\.hatch/m.test(py)) found.check = { command: 'hatch test', source: 'pyproject.toml [tool.hatch]' };
  else if (/^\[tool\.poetry/m.test(py))
    found.check = { command: 'poetry run pytest', source: 'pyproject.toml [tool.poetry]' };
  else if (/^\[tool\.pytest/m.test(py) || /["']pytest\b/.test(py))
    found.check = { command: 'python -m pytest', source: 'pyproject.toml (pytest)' };
  // tox and hatch make their own environments; poetry and a plain project are installed into one.
  if (/^\[tool\.poetry/m.test(py)) found.setup = { command: 'poetry install', source: 'pyproject.toml [tool.poetry]' };
  else if (pyproject !== null && found.check?.command === 'python -m pytest')
    found.setup = { command: 'python -m pip install -e .', source: 'pyproject.toml' };
  return found;
}

async function make(root: string): Promise<Found | null> {
  for (const file of ['GNUmakefile', 'makefile', 'Makefile']) {
    const mk = await text(root, file);
    if (mk === null) continue;
    for (const target of ['test', 'check']) {
      if (new RegExp(`^${target}\\s*:(?!=)`, 'm').test(mk))
        return { check: { command: `make ${target}`, source: `${file} target ${target}` } };
    }
    return null;
  }
  return null;
}

async function go(root: string): Promise<Found | null> {
  if ((await text(root, 'go.mod')) === null) return null;
  return {
    check: { command: 'go test ./...', source: 'go.mod' },
    setup: { command: 'go mod download', source: 'go.mod' },
  };
}

async function cargo(root: string): Promise<Found | null> {
  if ((await text(root, 'Cargo.toml')) === null) return null;
  return {
    check: { command: 'cargo test', source: 'Cargo.toml' },
    setup: { command: 'cargo fetch', source: 'Cargo.toml' },
  };
}

/** programs a test command written in prose starts with */
const RUNNERS =
  /^(npm|pnpm|yarn|bun|npx|make|just|pytest|python3?|uv|tox|nox|hatch|poetry|go|cargo|mvn|gradle|\.\/gradlew|bundle|rake|rspec|dotnet|deno|mix|\.\/[\w./-]+)\b/;

/** A command in backticks (or a fenced block) on a line that speaks of tests. */
async function agentsFile(root: string): Promise<Found | null> {
  for (const file of ['AGENTS.md', 'CLAUDE.md']) {
    const md = await text(root, file);
    if (md === null) continue;
    const lines = md.split(/\r?\n/);
    let fenced = false;
    let testContext = false;
    for (const line of lines) {
      if (/^\s*(```|~~~)/.test(line)) {
        fenced = !fenced;
        continue;
      }
      const candidates = fenced
        ? [line.trim().replace(/^\$\s*/, '')]
        : [...line.matchAll(/`([^`]+)`/g)].map((m) => m[1]!.trim());
      const aboutTests = /\btest/i.test(line);
      if (!fenced) testContext = aboutTests || (testContext && line.trim() === '');
      for (const c of candidates) {
        if (RUNNERS.test(c) && /\b(test|tests|pytest|check)\b/.test(c) && (aboutTests || testContext || fenced)) {
          return { check: { command: c, source: `${file}` } };
        }
      }
    }
  }
  return null;
}

const DETECTORS = [node, make, python, go, cargo, agentsFile];

export async function discoverProject(root: string): Promise<ProjectCommands> {
  const found: Array<Found | null> = [];
  for (const detect of DETECTORS) found.push(await detect(root));
  const withCheck = found.find((f) => f?.check !== undefined) ?? null;
  const check = withCheck?.check ?? null;
  const setup = withCheck?.setup ?? found.find((f) => f?.setup !== undefined)?.setup ?? null;
  return { check, setup };
}
