import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fsTextFiles, packagedAgentsDir } from '../../../src/adapters/store/file-store.js';
import { loadRoles, parseRoleFile } from '../../../src/core/roles/definitions.js';
import { InputErrors, type InputError } from '../../../src/domain/errors.js';
import { PACKAGED_AGENTS } from '../../helpers/paths.js';

const PACKAGED = PACKAGED_AGENTS;

let repo: string;
beforeEach(async () => {
  repo = await mkdtemp(join(tmpdir(), 'loopfleet-agents-'));
});
afterEach(async () => {
  await rm(repo, { recursive: true, force: true });
});

function problems(run: () => unknown): InputError[] {
  try {
    run();
  } catch (e) {
    if (e instanceof InputErrors) return e.errors;
    throw e;
  }
  throw new Error('expected the role file to be refused');
}

async function rejected(loading: Promise<unknown>): Promise<InputError[]> {
  try {
    await loading;
  } catch (e) {
    if (e instanceof InputErrors) return e.errors;
    throw e;
  }
  throw new Error('expected the role file to be refused');
}

describe('packaged roles', () => {
  it('loads all three with their defaults', async () => {
    const roles = await loadRoles(fsTextFiles, PACKAGED, repo);
    expect(Object.keys(roles).sort()).toEqual(['explorer', 'implementer', 'verifier']);
    expect(roles.explorer).toMatchObject({ role: 'explorer', name: 'explorer', maxTurns: 20, maxTokens: 8192 });
    expect(roles.implementer).toMatchObject({ role: 'implementer', maxTurns: 40, maxTokens: 8192 });
    expect(roles.verifier).toMatchObject({ role: 'verifier', maxTurns: 12, maxTokens: 8192 });
    for (const def of Object.values(roles)) {
      expect(def.source).toBe(join(PACKAGED, `${def.role}.md`));
      expect(def.model).toBeUndefined();
      expect(def.tools).toBeUndefined();
      expect(def.command).toBeUndefined();
      expect(def.description.length).toBeGreaterThan(20);
      expect(def.prompt.length).toBeGreaterThan(500);
      expect(def.prompt).not.toMatch(/^---/);
    }
    expect(roles.verifier.prompt).toContain('{"pass": true, "reasons": ["..."]}');
  });

  it('finds the packaged folder from the module', () => {
    expect(packagedAgentsDir()).toBe(PACKAGED);
  });
});

describe('overrides', () => {
  it('prefers a same-named file in the repository, role by role', async () => {
    await mkdir(join(repo, 'agents'));
    const own = join(repo, 'agents', 'implementer.md');
    await writeFile(
      own,
      [
        '---',
        'name: my-implementer',
        'description: Ours',
        'model: claude-opus-5-5',
        'tools: Read, Edit,  Bash',
        'maxTurns: 7',
        'max_tokens: 16k',
        'command: claude -p',
        'color: blue',
        '---',
        '',
        'Do the thing.',
        '',
      ].join('\n'),
    );
    const roles = await loadRoles(fsTextFiles, PACKAGED, repo);
    expect(roles.implementer).toEqual({
      role: 'implementer',
      name: 'my-implementer',
      description: 'Ours',
      model: 'claude-opus-5-5',
      tools: ['Read', 'Edit', 'Bash'],
      maxTurns: 7,
      maxTokens: 16_000,
      command: 'claude -p',
      prompt: 'Do the thing.',
      source: own,
    });
    expect(roles.explorer.source).toBe(join(PACKAGED, 'explorer.md'));
  });

  it('accepts a list of tools, model: inherit, and a file without front matter', () => {
    const def = parseRoleFile(
      '---\ntools:\n  - read\n  - grep\nmodel: inherit\n---\nLook.\n',
      '/r/agents/explorer.md',
      'explorer',
    );
    expect(def).toMatchObject({ tools: ['read', 'grep'], maxTurns: 20, prompt: 'Look.' });
    expect(def.model).toBeUndefined();
    expect(parseRoleFile('Just a prompt.\r\n', '/r/agents/verifier.md', 'verifier')).toMatchObject({
      name: 'verifier',
      prompt: 'Just a prompt.',
      maxTurns: 12,
    });
  });

  it('reports bad front matter with the file and line', async () => {
    await mkdir(join(repo, 'agents'));
    const bad = join(repo, 'agents', 'verifier.md');
    await writeFile(bad, '---\nname: v\nmax_turns: many\n---\nReview.\n');
    const errs = await rejected(loadRoles(fsTextFiles, PACKAGED, repo));
    expect(errs).toHaveLength(1);
    expect(errs[0]).toMatchObject({ file: bad, line: 3 });
    expect(errs[0]!.problem).toContain("max_turns must be a whole number of at least 1, got 'many'");
  });

  it.each([
    ['---\nname: "open\n---\nx\n', 2, 'front matter is not valid YAML'],
    ['---\nname: x\n', 1, 'unterminated front matter'],
    ['---\n- a\n---\nx\n', 2, 'front matter must be a YAML mapping'],
    ['---\nmax_turn: 3\n---\nx\n', 2, "unknown key 'max_turn' (did you mean 'max_turns'?)"],
    ['---\ndescription: [a]\n---\nx\n', 2, 'description must be a single value'],
    ['---\nmax_tokens: 0\n---\nx\n', 2, 'max_tokens must be a whole number of at least 1'],
    ['---\ntools: {a: 1}\n---\nx\n', 2, 'tools must be a comma-separated list'],
    ['---\nname: x\n---\n\n', 4, 'no system prompt'],
    ['', 1, 'no system prompt'],
  ])('refuses %j', (text, line, fragment) => {
    const errs = problems(() => parseRoleFile(text, '/r/agents/explorer.md', 'explorer'));
    expect(errs).toHaveLength(1);
    expect(errs[0]).toMatchObject({ file: '/r/agents/explorer.md', line });
    expect(errs[0]!.problem).toContain(fragment);
  });

  it('reports every broken file at once, and a missing packaged file', async () => {
    await mkdir(join(repo, 'agents'));
    await writeFile(join(repo, 'agents', 'explorer.md'), '---\nmax_turns: 0\n---\nx\n');
    await writeFile(join(repo, 'agents', 'verifier.md'), '---\nmax_turns: -1\n---\nx\n');
    const errs = await rejected(loadRoles(fsTextFiles, join(repo, 'nowhere'), repo));
    expect(errs.map((e) => [e.file, e.line])).toEqual([
      [join(repo, 'agents', 'explorer.md'), 2],
      [join(repo, 'nowhere', 'implementer.md'), null],
      [join(repo, 'agents', 'verifier.md'), 2],
    ]);
    expect(errs[1]!.problem).toContain('cannot read the implementer role definition');
  });
});

describe('role files through the TextFiles port', () => {
  it('reports a file that exists but cannot be read, and reads nothing else for that role', async () => {
    const asked: string[] = [];
    const files = {
      async readText(path: string): Promise<string | null> {
        asked.push(path);
        if (path === '/repo/agents/explorer.md')
          throw Object.assign(new Error('permission denied'), { code: 'EACCES' });
        if (path.startsWith('/pkg/')) return 'Do the work.\n';
        return null;
      },
    };
    const errs = await rejected(loadRoles(files, '/pkg', '/repo'));
    expect(errs.map((e) => [e.file, e.problem])).toEqual([
      ['/repo/agents/explorer.md', 'cannot read the explorer role definition: EACCES'],
    ]);
    expect(asked).not.toContain('/pkg/explorer.md');
  });
});
