/**
 * Agent CLIs that bring their own Seatbelt sandbox run with it off inside loopfleet's on macOS (a Seatbelt
 * profile cannot be applied inside another), and exactly as before on Linux. The platform is passed in.
 */
import { describe, expect, it } from 'vitest';
import { PRESETS } from '../../../src/adapters/model/agent-presets/index.js';
import { presetRequest } from '../../helpers/preset-request.js';

const task = { model: 'claude-sonnet-5-5', prompt: 'Do it.', workdir: '/w' };
const writer = presetRequest({ preset: 'codex' }, 'implementer', task);
const reader = presetRequest({ preset: 'codex' }, 'explorer', task);
const SETTINGS = ['--settings', '{"sandbox":{"enabled":false}}'];

describe('darwin flags of the presets', () => {
  it('codex: the bypass for every sandboxed role on darwin; on Linux only for the implementer', () => {
    const bypass = '--dangerously-bypass-approvals-and-sandbox';
    expect(PRESETS.codex.build(reader, 'codex', {}, true, '/s', 'darwin').argv).toContain(bypass);
    expect(PRESETS.codex.build(reader, 'codex', {}, true, '/s', 'darwin').argv).not.toContain('--sandbox');
    expect(PRESETS.codex.build(writer, 'codex', {}, true, '/s', 'darwin').argv).toContain(bypass);
    expect(PRESETS.codex.build(reader, 'codex', {}, true, '/s', 'linux').argv).toEqual(
      expect.arrayContaining(['--sandbox', 'read-only']),
    );
    expect(PRESETS.codex.build(writer, 'codex', {}, true, '/s', 'linux').argv).toContain(bypass);
    // Unsandboxed (sandbox: off), Codex keeps its own sandbox everywhere.
    expect(PRESETS.codex.build(reader, 'codex', {}, false, '/s', 'darwin').argv).toEqual(
      expect.arrayContaining(['--sandbox', 'read-only']),
    );
    expect(PRESETS.codex.build(writer, 'codex', {}, false, '/s', 'darwin').argv).toEqual(
      expect.arrayContaining(['--sandbox', 'workspace-write']),
    );
  });

  it('claude-code: its own sandbox off through --settings, only when sandboxed on darwin', () => {
    const argv = (sandboxed: boolean, platform: NodeJS.Platform) =>
      PRESETS['claude-code'].build(
        { ...writer, agent: { preset: 'claude-code' } },
        'claude',
        {},
        sandboxed,
        '/s',
        platform,
      ).argv;
    const darwin = argv(true, 'darwin');
    expect(darwin.slice(darwin.indexOf('--settings'), darwin.indexOf('--settings') + 2)).toEqual(SETTINGS);
    expect(argv(true, 'linux')).not.toContain('--settings');
    expect(argv(false, 'darwin')).not.toContain('--settings');
  });

  it('gemini: GEMINI_SANDBOX=false only when sandboxed on darwin', () => {
    const env = (sandboxed: boolean, platform: NodeJS.Platform) =>
      PRESETS.gemini.build({ ...writer, agent: { preset: 'gemini' } }, 'gemini', {}, sandboxed, '/s', platform).env;
    expect(env(true, 'darwin')).toEqual({ GEMINI_SANDBOX: 'false' });
    expect(env(true, 'linux')).toEqual({});
    expect(env(false, 'darwin')).toEqual({});
  });
});
