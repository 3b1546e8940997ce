import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { discoverProject } from '../../src/commands/init-detect.js';
import { PACKAGED_BACKLOG } from '../helpers/paths.js';

let dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
  dirs = [];
});

async function project(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'loopfleet-detect-'));
  dirs.push(dir);
  for (const [name, content] of Object.entries(files)) await writeFile(join(dir, name), content);
  return dir;
}

const pkg = (extra: object = {}) => JSON.stringify({ name: 'x', scripts: { test: 'vitest run' }, ...extra });

describe('what init reads from a repository', () => {
  it('package.json with package-lock.json: npm test, npm ci', async () => {
    expect(await discoverProject(await project({ 'package.json': pkg(), 'package-lock.json': '{}' }))).toEqual({
      check: { command: 'npm test', source: 'package.json scripts.test' },
      setup: { command: 'npm ci', source: 'package-lock.json' },
    });
  });

  it.each([
    ['pnpm-lock.yaml', 'pnpm test', 'pnpm install --frozen-lockfile'],
    ['yarn.lock', 'yarn test', 'yarn install --frozen-lockfile'],
    ['bun.lockb', 'bun test', 'bun install'],
  ])('the lockfile %s names the package manager of both', async (lock, check, setup) => {
    const found = await discoverProject(await project({ 'package.json': pkg(), [lock]: '' }));
    expect(found.check?.command).toBe(check);
    expect(found.setup).toEqual({ command: setup, source: lock });
  });

  it('no lockfile: the packageManager field, else npm install; .npmrc package-lock=false is named', async () => {
    const declared = await discoverProject(await project({ 'package.json': pkg({ packageManager: 'pnpm@9.1.0' }) }));
    expect(declared).toEqual({
      check: { command: 'pnpm test', source: 'package.json scripts.test' },
      setup: { command: 'pnpm install', source: 'no lockfile; package.json packageManager: pnpm@9.1.0' },
    });
    const noLock = await discoverProject(await project({ 'package.json': pkg(), '.npmrc': 'package-lock=false\n' }));
    expect(noLock.setup).toEqual({ command: 'npm install', source: 'no lockfile (.npmrc: package-lock=false)' });
  });

  it("npm's placeholder test script is not a check", async () => {
    const found = await discoverProject(
      await project({
        'package.json': JSON.stringify({ scripts: { test: 'echo "Error: no test specified" && exit 1' } }),
      }),
    );
    expect(found.check).toBeNull();
    expect(found.setup?.command).toBe('npm install');
  });

  it('pyproject: pytest, tox, hatch, poetry; tox.ini', async () => {
    expect(
      await discoverProject(
        await project({ 'pyproject.toml': '[project]\nname = "x"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n' }),
      ),
    ).toEqual({
      check: { command: 'python -m pytest', source: 'pyproject.toml (pytest)' },
      setup: { command: 'python -m pip install -e .', source: 'pyproject.toml' },
    });
    expect(
      (await discoverProject(await project({ 'pyproject.toml': '[tool.tox]\nlegacy_tox_ini = ""\n' }))).check?.command,
    ).toBe('tox');
    expect(
      (
        await discoverProject(
          await project({ 'pyproject.toml': '[tool.hatch.envs.default.scripts]\ntest = "pytest"\n' }),
        )
      ).check?.command,
    ).toBe('hatch run test');
    expect(
      (await discoverProject(await project({ 'pyproject.toml': '[tool.hatch.version]\npath = "x.py"\n' }))).check
        ?.command,
    ).toBe('hatch test');
    expect(await discoverProject(await project({ 'pyproject.toml': '[tool.poetry]\nname = "x"\n' }))).toEqual({
      check: { command: 'poetry run pytest', source: 'pyproject.toml [tool.poetry]' },
      setup: { command: 'poetry install', source: 'pyproject.toml [tool.poetry]' },
    });
    expect(await discoverProject(await project({ 'tox.ini': '[tox]\nenvlist = py3\n' }))).toEqual({
      check: { command: 'tox', source: 'tox.ini' },
      setup: null,
    });
  });

  it('Makefile test or check target (not a variable)', async () => {
    expect(
      (
        await discoverProject(
          await project({ Makefile: 'CHECK := x\nbuild:\n\tcc x.c\ncheck: build\n\t./x --self-test\n' }),
        )
      ).check,
    ).toEqual({ command: 'make check', source: 'Makefile target check' });
    expect(
      (await discoverProject(await project({ Makefile: 'test:\n\t./run-tests\ncheck: test\n' }))).check?.command,
    ).toBe('make test');
    expect((await discoverProject(await project({ Makefile: 'all:\n\tcc x.c\n' }))).check).toBeNull();
  });

  it('go.mod and Cargo.toml', async () => {
    expect(await discoverProject(await project({ 'go.mod': 'module example.com/x\n\ngo 1.22\n' }))).toEqual({
      check: { command: 'go test ./...', source: 'go.mod' },
      setup: { command: 'go mod download', source: 'go.mod' },
    });
    expect(await discoverProject(await project({ 'Cargo.toml': '[package]\nname = "x"\n' }))).toEqual({
      check: { command: 'cargo test', source: 'Cargo.toml' },
      setup: { command: 'cargo fetch', source: 'Cargo.toml' },
    });
  });

  it('an AGENTS.md or CLAUDE.md that names the test command, inline or in a fenced block', async () => {
    expect(
      (
        await discoverProject(
          await project({
            'AGENTS.md': '# Notes\n\nFormat with `npm run fmt`.\nRun the tests with `just test-all` before a commit.\n',
          }),
        )
      ).check,
    ).toEqual({
      command: 'just test-all',
      source: 'AGENTS.md',
    });
    expect(
      (await discoverProject(await project({ 'CLAUDE.md': '## Testing\n\n```sh\n$ ./scripts/test.sh --fast\n```\n' })))
        .check,
    ).toEqual({ command: './scripts/test.sh --fast', source: 'CLAUDE.md' });
    expect((await discoverProject(await project({ 'AGENTS.md': 'Use `npm run lint` for style.\n' }))).check).toBeNull();
  });

  it('names nothing where the project declares nothing', async () => {
    expect(await discoverProject(await project({ 'README.md': '# x\n' }))).toEqual({ check: null, setup: null });
  });
});

describe('the template init writes', () => {
  it('holds each proposal uncommented, quoted where YAML needs it, and parses back to the same commands', async () => {
    const { readFile } = await import('node:fs/promises');
    const { fillTemplate } = await import('../../src/commands/init.js');
    const { parseBacklog } = await import('../../src/core/backlog/parse.js');
    const template = await readFile(join(PACKAGED_BACKLOG, 'init-template.md'), 'utf8');
    const odd = 'pytest -k "not slow" # a: b';
    const text = fillTemplate(template, {
      check: { command: odd, source: 'AGENTS.md' },
      setup: { command: 'npm ci', source: 'package-lock.json' },
    });
    expect(text).toMatch(/^check: "pytest -k \\"not slow\\" # a: b" # AGENTS\.md$/m);
    expect(text).toMatch(/^setup: npm ci +# package-lock\.json$/m);
    const { backlog } = parseBacklog(text, '/r/BACKLOG.md');
    expect([backlog.config.check, backlog.config.setup]).toEqual([odd, 'npm ci']);
    // nothing found: the template as it was, every setting commented out
    expect(fillTemplate(template, { check: null, setup: null })).toBe(template);
  });
});
