/**
 * The attacks of the sandbox self-test, as data per platform: each probe names the promise of the sandbox it
 * attacks (a {@link SandboxPromise}: what agent-written code may reach where it runs), the rule of that
 * platform's enforcer that must stop it, and the shell lines that print `ESCAPED: <what>` when it gets
 * through. What the host itself can observe (a file that appears, a connection its listener accepts) is
 * checked by the harness as well ({@link sandboxSelfTest}), so a probe that lies about its result still
 * fails the self-test.
 */

export const ESCAPED = 'ESCAPED:';

/** What the sandbox promises, each attacked by at least one probe on every platform that has it. */
export type SandboxPromise =
  /** no uid 0, no capability, nothing remounted */
  | 'no-privilege'
  /** writes land only in the worktree (and the git paths a linked worktree needs) */
  | 'writes-only-worktree'
  /** homes cannot be read (their keys, tokens, shell history) */
  | 'homes-hidden'
  /** the host's /tmp and /var/tmp cannot be read */
  | 'host-tmp-hidden'
  /** no Unix socket of the host (docker, ssh-agent, D-Bus, mDNSResponder) can be reached */
  | 'sockets-unreachable'
  /** no network but loopfleet's egress proxy */
  | 'network-only-proxy';

export type SelfTestPlatform = 'linux' | 'darwin';

/** What the harness planted on the host for the probes to attack. */
export interface ProbeTargets {
  /** a host folder outside every writable mount (under /var/tmp where it exists) */
  hostDir: string;
  /** a host folder in the host's temporary folder, outside the worktree */
  hostTmp: string;
  /** the file name every write probe tries to create: one per run, so that runs at once cannot see each other's */
  written: string;
  /** files holding `token`, each in a place the sandbox must hide */
  canaries: Array<{ file: string; token: string; in: 'home' | 'tmp' }>;
  /** the homes of the user running loopfleet (passwd's and $HOME's) */
  homes: string[];
  /** a Unix socket the harness listens on, in hostDir */
  socket: string;
  /** an abstract Unix socket the harness listens on (Linux only) */
  abstract: string | null;
  /** a TCP port the harness listens on: a host no `network:` entry allows */
  tcp: { host: string; port: number } | null;
  /** sockets of the system's /var/run that exist on this host */
  systemSockets: string[];
}

export interface SelfTestProbe {
  id: string;
  promise: SandboxPromise;
  /** what it tries, in words */
  attempt: string;
  /** the rule of the platform's enforcer that stops it (a bubblewrap option, a Seatbelt operation) */
  deniedBy: string;
  /** shell lines printing `ESCAPED: …` for what got through */
  script(t: ProbeTargets): string[];
  /** host files the attempt would create: any that appears is an escape, whatever was printed */
  lands?(t: ProbeTargets): string[];
}

export const sh = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

type ConnectTarget = { unix: string } | { host: string; port: number };

/** Connects to each target with node (the toolchain on PATH) or python3, printing what accepted. */
function connectLines(targets: ConnectTarget[]): string[] {
  if (targets.length === 0) return [];
  const node = `for (const t of ${JSON.stringify(targets.map((t) => ('unix' in t ? { path: t.unix } : t)))}) { const s = require('net').connect(t); s.setTimeout(5000, () => s.destroy()); s.on('connect', function () { console.log(${JSON.stringify(`${ESCAPED} connected to `)} + (t.path === undefined ? t.host + ':' + t.port : t.path.replace(/^\\0/, '@'))); this.destroy(); }).on('error', () => {}); }`;
  const python = [
    'import socket',
    `for t in ${JSON.stringify(targets.map((t) => ('unix' in t ? [t.unix] : [t.host, t.port])))}:`,
    '  s = socket.socket(socket.AF_UNIX) if len(t) == 1 else socket.socket(socket.AF_INET)',
    '  s.settimeout(5)',
    '  try:',
    '    s.connect(t[0] if len(t) == 1 else (t[0], t[1]))',
    `    print(${JSON.stringify(`${ESCAPED} connected to `)} + (t[0].replace("\\0", "@") if len(t) == 1 else "%s:%d" % (t[0], t[1])))`,
    '  except OSError: pass',
    '  s.close()',
  ].join('\n');
  return [
    `if command -v node >/dev/null 2>&1; then node -e ${sh(node)}; elif command -v python3 >/dev/null 2>&1; then python3 -c ${sh(python)}; fi`,
  ];
}

function writeLines(folders: string[], written: string): string[] {
  return [
    `for d in ${folders.map(sh).join(' ')}; do ( : > "$d/"${sh(written)} ) 2>/dev/null && echo "${ESCAPED} wrote to $d"; done`,
  ];
}

const landing = (folders: string[], written: string): string[] =>
  folders.map((d) => `${d.replace(/\/$/, '')}/${written}`);

const readLines = (canaries: ProbeTargets['canaries']): string[] =>
  canaries.map((c) => `grep -qs ${sh(c.token)} ${sh(c.file)} && echo ${sh(`${ESCAPED} read ${c.file}`)}`);

/** System folders a write is attempted in on Linux, besides the planted host folder. */
const LINUX_WRITE_TARGETS = ['/', '/usr', '/etc'];
/** On macOS: the system folders and /usr/local (Homebrew's, often the user's own), besides homes and planted folders. */
const DARWIN_WRITE_TARGETS = ['/', '/etc', '/usr/local'];

const LINUX: readonly SelfTestProbe[] = [
  {
    id: 'uid-0',
    promise: 'no-privilege',
    attempt: 'run as uid 0',
    deniedBy: '--unshare-user --uid 65534',
    script: () => [`[ "$(id -u)" = 0 ] && echo ${sh(`${ESCAPED} the command runs as uid 0`)}`],
  },
  {
    id: 'capabilities',
    promise: 'no-privilege',
    attempt: 'hold a capability',
    deniedBy: '--cap-drop ALL',
    script: () => [
      `grep -Eq '^CapEff:[[:space:]]*0+$' /proc/self/status || echo "${ESCAPED} the command holds capabilities ($(grep CapEff /proc/self/status | tr -s '\\t ' ' '))"`,
    ],
  },
  {
    id: 'remount',
    promise: 'no-privilege',
    attempt: 'remount / read-write',
    deniedBy: '--remount-ro / in a user namespace without capabilities',
    script: () => [`mount -o remount,rw / 2>/dev/null && echo ${sh(`${ESCAPED} mount -o remount,rw / succeeded`)}`],
  },
  {
    id: 'write-outside',
    promise: 'writes-only-worktree',
    attempt: 'write to /, /usr, /etc and a host folder',
    deniedBy: '--ro-bind of the system folders; nothing else of the host mounted',
    script: (t) => writeLines([...LINUX_WRITE_TARGETS, t.hostDir], t.written),
    lands: (t) => landing([...LINUX_WRITE_TARGETS, t.hostDir], t.written),
  },
  {
    id: 'read-home',
    promise: 'homes-hidden',
    attempt: 'read a file planted in each home',
    deniedBy: 'homes not mounted (or a tmpfs over one inside a system folder)',
    script: (t) => readLines(t.canaries.filter((c) => c.in === 'home')),
  },
  {
    id: 'read-host-tmp',
    promise: 'host-tmp-hidden',
    attempt: 'read files planted in the host /tmp and /var/tmp',
    deniedBy: '--tmpfs /tmp; /var not mounted',
    script: (t) => readLines(t.canaries.filter((c) => c.in === 'tmp')),
  },
  {
    id: 'see-socket',
    promise: 'sockets-unreachable',
    attempt: 'see a host Unix socket by its path',
    deniedBy: '/var, /run and the host /tmp not mounted',
    script: (t) => [`[ -e ${sh(t.socket)} ] && echo ${sh(`${ESCAPED} the host socket ${t.socket} is visible`)}`],
  },
  {
    id: 'connect-socket',
    promise: 'sockets-unreachable',
    attempt: 'connect to a host Unix socket by path and an abstract one',
    deniedBy: '--unshare-net (abstract sockets belong to the network namespace)',
    script: (t) => connectLines([{ unix: t.socket }, ...(t.abstract === null ? [] : [{ unix: t.abstract }])]),
  },
  {
    id: 'connect-host',
    promise: 'network-only-proxy',
    attempt: 'connect to a host no network: entry allows (a TCP port on this machine)',
    deniedBy: '--unshare-net (the sandbox has its own loopback; the network only through the egress proxy)',
    script: (t) => connectLines(t.tcp === null ? [] : [t.tcp]),
  },
];

const DARWIN: readonly SelfTestProbe[] = [
  {
    id: 'write-home',
    promise: 'writes-only-worktree',
    attempt: 'write to ~',
    deniedBy: 'file-write* (only the worktree and the git paths a linked worktree needs are allowed)',
    script: (t) => writeLines(t.homes, t.written),
    lands: (t) => landing(t.homes, t.written),
  },
  {
    id: 'write-outside',
    promise: 'writes-only-worktree',
    attempt: 'write to /, /etc, /usr/local, the temporary folder and a host folder outside the worktree',
    deniedBy: 'file-write* (only the worktree and the git paths a linked worktree needs are allowed)',
    script: (t) => writeLines([...DARWIN_WRITE_TARGETS, t.hostTmp, t.hostDir], t.written),
    lands: (t) => landing([...DARWIN_WRITE_TARGETS, t.hostTmp, t.hostDir], t.written),
  },
  {
    id: 'read-home',
    promise: 'homes-hidden',
    attempt: 'read a file planted in ~ and list ~/.ssh',
    deniedBy: 'file-read* denied under the homes (the agent CLI’s own config folder excepted)',
    script: (t) => [
      ...readLines(t.canaries.filter((c) => c.in === 'home')),
      ...t.homes.map((h) => `ls -A ${sh(`${h}/.ssh`)} >/dev/null 2>&1 && echo ${sh(`${ESCAPED} listed ${h}/.ssh`)}`),
    ],
  },
  {
    id: 'connect-host',
    promise: 'network-only-proxy',
    attempt: 'connect to a host no network: entry allows (a TCP port on this machine)',
    deniedBy: 'network-outbound (remote ip) allowed to the egress proxy only',
    script: (t) => connectLines(t.tcp === null ? [] : [t.tcp]),
  },
  {
    id: 'connect-socket',
    promise: 'sockets-unreachable',
    attempt: 'connect to the Unix sockets in /var/run and to one planted on the host',
    deniedBy: 'network-outbound (remote unix-socket) denied',
    script: (t) => connectLines([...t.systemSockets, t.socket].map((unix) => ({ unix }))),
  },
];

const PROBES: Record<SelfTestPlatform, readonly SelfTestProbe[]> = { linux: LINUX, darwin: DARWIN };

/** The self-test's probes for `platform`; throws for a platform loopfleet has no sandbox on. */
export function selfTestProbes(platform: string): readonly SelfTestProbe[] {
  if (platform !== 'linux' && platform !== 'darwin')
    throw new Error(`the sandbox self-test has no probes for ${platform}: loopfleet sandboxes Linux and macOS only`);
  return PROBES[platform];
}

/** The probes of `platform` as one script printing `ESCAPED: <what>` for each attack that succeeds. */
export function attackScript(probes: readonly SelfTestProbe[], targets: ProbeTargets): string {
  return [...probes.flatMap((p) => p.script(targets)), 'exit 0'].join('\n');
}
