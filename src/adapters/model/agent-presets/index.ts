import type { AgentPresetName } from '../../../ports/model.js';
import { claudeCode } from './claude-code.js';
import { codex } from './codex.js';
import { gemini } from './gemini.js';
import { opencode } from './opencode.js';
import type { AgentPreset } from './types.js';

export type { AgentPreset, ConfigPath, PresetInvocation, RunOutcome } from './types.js';

export const PRESETS: Readonly<Record<AgentPresetName, AgentPreset>> = Object.freeze({
  'claude-code': claudeCode,
  codex,
  gemini,
  opencode,
});

export function presetOf(name: AgentPresetName): AgentPreset {
  return PRESETS[name];
}
