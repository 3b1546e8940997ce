/** Running commands: setup, checks, the agent's shell tool and external CLI agents. */

/** An extra bind mount of a sandbox (a CLI agent's config folder, its executable, the egress socket). */
export interface SandboxMount {
  /** host path; must exist */
  src: string;
  /** path inside the sandbox */
  dest: string;
  readOnly: boolean;
}

export interface RunOptions {
  cwd: string;
  /** the complete environment of the child; nothing is inherited implicitly */
  env: Record<string, string>;
  timeoutMs: number;
  signal?: AbortSignal;
  /** written to stdin, then stdin is closed */
  input?: string;
  /**
   * Confine the command: read-only system, only `cwd` (and `writable` paths) writable, private /tmp, no network.
   * The runner throws when asked for a sandbox it cannot provide.
   */
  sandbox?: {
    writable: string[];
    mounts?: SandboxMount[];
    home?: string;
    /**
     * Hosts (`host`, `host:port` or a URL) the command may reach, through an egress proxy that honours the
     * person's own proxy settings upstream; HTTPS_PROXY/HTTP_PROXY inside point at it. Absent: no network.
     */
    network?: string[];
  } | null;
  /** called with output as it arrives (stdout and stderr interleaved) */
  onOutput?: (chunk: string) => void;
  /** keep at most this many bytes of the tail of the combined output; default 64 KiB */
  maxOutputBytes?: number;
  /**
   * of those, keep the first this many bytes of the output instead (at most half), with a line saying how
   * much was cut between head and tail; default 0 (the tail only, for output that is parsed)
   */
  keepHeadBytes?: number;
}

export interface RunResult {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  aborted: boolean;
  /** tail (or head and tail, see keepHeadBytes) of the combined output, at most maxOutputBytes plus the cut line */
  output: string;
  /** true when the output was cut to its tail */
  truncated: boolean;
  durationMs: number;
}

export interface ProcessRunner {
  /** runs `command` through /bin/sh -c */
  run(command: string, options: RunOptions): Promise<RunResult>;
  /** whether `sandbox` can be honoured on this machine */
  sandboxAvailable(): Promise<boolean>;
  /**
   * Everything that decides whether this runner's sandbox holds, as one string (the enforcer's file, the
   * kernel, the uid, its arguments), so that a passing self-test can be kept for it; null or absent when the
   * runner cannot say (then the self-test runs every time).
   */
  sandboxIdentity?(): Promise<string | null>;
}
