import { describe, expect, it } from 'vitest';
import { parseRoleFile } from '../../../src/core/roles/definitions.js';
import { parseBacklog } from '../../../src/core/backlog/parse.js';

describe('agent: and bin: in a role file', () => {
  it('reads a preset and its executable', () => {
    const def = parseRoleFile(
      '---\nagent: claude-code\nbin: /opt/claude/bin/claude\nmodel: claude-sonnet-5-5\n---\nPrompt.\n',
      'agents/implementer.md',
      'implementer',
    );
    expect(def).toMatchObject({ agent: 'claude-code', bin: '/opt/claude/bin/claude', model: 'claude-sonnet-5-5' });
    expect(parseRoleFile('---\nagent: api\n---\nPrompt.\n', 'a.md', 'explorer').agent).toBeUndefined();
  });
  it('names the file and line of an unknown preset, and refuses agent: with command: or bin: alone', () => {
    expect(() => parseRoleFile('---\nagent: claude\n---\nP\n', 'agents/explorer.md', 'explorer')).toThrow(
      /agents\/explorer.md:2: agent must be one of claude-code, codex, gemini, opencode \(or api\), got 'claude'/,
    );
    expect(() => parseRoleFile('---\nagent: codex\ncommand: codex exec\n---\nP\n', 'a.md', 'explorer')).toThrow(
      /keep one/,
    );
    expect(() => parseRoleFile('---\nbin: /x/claude\n---\nP\n', 'a.md', 'explorer')).toThrow(/add agent:/);
  });
});

describe('network: in the backlog front matter', () => {
  const doc = (front: string) => `---\n${front}\n---\n\n# Backlog\n\n- [ ] T-1 One\n`;
  it('lists extra hosts a CLI agent may reach', () => {
    expect(
      parseBacklog(doc('network:\n  - registry.npmjs.org\n  - Proxy.local:8080'), 'BACKLOG.md').backlog.config.network,
    ).toEqual(['registry.npmjs.org', 'proxy.local:8080']);
    expect(parseBacklog(doc('check: "true"'), 'BACKLOG.md').backlog.config.network).toBeUndefined();
  });
  it('refuses what is not a host, with file and line', () => {
    expect(() => parseBacklog(doc('network:\n  - https://x.org/path'), 'BACKLOG.md')).toThrow(
      /BACKLOG.md:2: network must list host names/,
    );
  });
});
