import type { AgentPresetName, AgentRequest } from '../../../ports/model.js';

/**
 * How loopfleet drives one known CLI agent: its command line, the credentials and config folders that are
 * its own, where its model lives, and what its failures mean.
 */

export interface PresetInvocation {
  /** executable first */
  argv: string[];
  /** written to stdin, then closed */
  stdin: string;
  /** variables set for this CLI on top of the task environment and its own credentials */
  env: Record<string, string>;
  /** files written into the run's scratch folder before it starts (name → content), read-only to the CLI */
  files?: Record<string, string>;
}

export interface ConfigPath {
  /** relative to the home folder */
  path: string;
  kind: 'dir' | 'file';
  /** top-level entries of a folder left out of the run's private copy: caches and session history */
  cache?: string[];
}

/** What the CLI's output and exit said, for classification. */
export interface RunOutcome {
  exitCode: number | null;
  /** tail of the combined output */
  output: string;
  /** the error its structured output reported, if any */
  reportedError: string | null;
  /** tools the CLI refused to run (claude's `permission_denials`) */
  denials: string[];
  access: AgentRequest['access'];
}

export interface AgentPreset {
  name: AgentPresetName;
  /** executable name looked up on PATH when the role has no `bin:` */
  defaultBin: string;
  /** npm package that provides it, for messages */
  packageName: string;
  /** names of loopfleet's environment variables that are this CLI's credentials and settings */
  credentialEnv: RegExp;
  /**
   * its own config and login folders under the home folder; a sandboxed run sees a private copy
   * ({@link prepareConfigView})
   */
  configPaths: ConfigPath[];
  /** variables holding a base URL of its model endpoint, first set wins; else `defaultEndpoint` */
  baseUrlEnv: string[];
  defaultEndpoint: string;
  /** how to log in or key it, for messages */
  loginHint: string;
  /** variables that key it on their own */
  keyEnv: string[];
  /** files under the home folder that hold a login; the only files a run's changes are merged back from */
  loginFiles: string[];
  /**
   * `env`: the task environment with the preset's credentials, as the CLI will see it; `sandboxed`: whether
   * loopfleet's sandbox confines the run (a CLI's own sandbox may then be redundant or unable to nest);
   * `scratch`: the absolute path of the run's own empty folder, where `files` are written (removed after the run);
   * `platform`: whose enforcer confines a sandboxed run (on darwin, Seatbelt: a CLI's own Seatbelt cannot nest
   * inside it, so it is turned off); default linux
   */
  build(
    request: AgentRequest,
    bin: string,
    env: Record<string, string>,
    sandboxed: boolean,
    scratch: string,
    platform?: NodeJS.Platform,
  ): PresetInvocation;
  /** a reason naming the cause and the fix, or null when the run did not fail for a known cause */
  classify(outcome: RunOutcome): Error | null;
}
