/**
 * What a Linux host tells about its user namespaces, read for the diagnosis of a sandbox that cannot run
 * ({@link diagnoseSandbox}). Paths are the host's absolute paths (`/proc/sys/user/...`); a reader
 * may serve them from another root, which is how each cause is reproduced without changing the host.
 */
export interface BwrapProbe {
  /** null when bubblewrap was killed or did not start */
  exitCode: number | null;
  /** its standard error, where bubblewrap names the step that failed */
  stderr: string;
}

export interface UsernsFacts {
  /** the platform loopfleet runs on (`linux`, `darwin`, …) */
  readonly platform: string;
  /** a host file's text, or null when it does not exist or cannot be read */
  read(file: string): Promise<string | null>;
  /** whether a host path exists */
  exists(file: string): Promise<boolean>;
  /** absolute path of an executable `name` on PATH, or null */
  which(name: string): Promise<string | null>;
  /** runs the smallest sandbox (the same isolation as every other) with the bubblewrap at `bwrap` */
  probe(bwrap: string): Promise<BwrapProbe>;
}
