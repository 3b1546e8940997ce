/**
 * The Seatbelt profile, as text, row by row. sandbox-runtime builds the profile on macOS from the lists
 * loopfleet's settings hold; here its own profile generator (the pinned 0.0.83's, imported from its
 * macOS module: it is plain string building and runs anywhere) is given those lists, and the SBPL it
 * returns is evaluated the way Seatbelt evaluates it — default deny, the last matching rule wins — for
 * every row of the fixed policy: what must be allowed and what must be denied.
 *
 * What this does not cover: srt's manager turns the settings file into these lists (resolving links,
 * expanding patterns); that step runs only on a Mac, in the job the README gives.
 */
import os from 'node:os';
import path from 'node:path';
import { getDefaultWritePaths } from '@anthropic-ai/sandbox-runtime';
import { wrapCommandWithSandboxMacOS } from '@anthropic-ai/sandbox-runtime/dist/sandbox/macos-sandbox-utils.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isInside } from '../../../src/adapters/fs/paths.js';
import type { PolicyRow, SandboxPolicy } from '../../../src/adapters/sandbox/policy.js';
import { SRT_SHARED_TMP, srtPathOf, srtSettings } from '../../../src/adapters/sandbox/srt-settings.js';
import { policyFixture, type PolicyFixture } from '../../helpers/policy-fixture.js';

type Sexp = string | Sexp[];

/** The forms of an SBPL profile (strings keep their quotes off; `#"…"` regexes are not used by srt). */
function parse(text: string): Sexp[] {
  const tokens = text.replace(/;[^\n]*/g, '').match(/"(?:[^"\\]|\\.)*"|[()]|[^\s()]+/g) ?? [];
  let i = 0;
  const read = (): Sexp => {
    const t = tokens[i++]!;
    if (t === '(') {
      const list: Sexp[] = [];
      while (tokens[i] !== ')') list.push(read());
      i++;
      return list;
    }
    return t.startsWith('"') ? (JSON.parse(t) as string) : t;
  };
  const forms: Sexp[] = [];
  while (i < tokens.length) forms.push(read());
  return forms;
}

interface Query {
  op: string;
  path?: string;
  remote?: string;
}

function opMatches(ruleOp: string, op: string): boolean {
  return ruleOp === op || (ruleOp.endsWith('*') && op.startsWith(ruleOp.slice(0, -1)));
}

/** Whether a filter matches; `with` clauses are not filters. */
function filterMatches(f: Sexp, q: Query): boolean {
  if (!Array.isArray(f)) return false;
  const [head, ...rest] = f;
  switch (head) {
    case 'subpath':
      return q.path !== undefined && isInside(q.path, rest[0] as string);
    case 'literal':
      return q.path === rest[0];
    case 'regex':
      return q.path !== undefined && new RegExp(rest[0] as string).test(q.path);
    case 'require-all':
      return rest.every((x) => filterMatches(x, q));
    case 'require-any':
      return rest.some((x) => filterMatches(x, q));
    case 'require-not':
      return !filterMatches(rest[0]!, q);
    case 'remote': {
      if (q.remote === undefined || rest[0] !== 'ip') return false;
      const [host, port] = (rest[1] as string).split(':');
      const [qh, qp] = q.remote.split(':');
      return (host === '*' || host === qh) && (port === '*' || port === qp);
    }
    case 'vnode-type':
      // The queries below are about files; the directory-metadata allow never decides them.
      return false;
    default:
      return false;
  }
}

/** Seatbelt's answer for `q`: the last rule whose operation and filters match; deny by default. */
function decide(profile: Sexp[], q: Query): 'allow' | 'deny' {
  let answer: 'allow' | 'deny' = 'deny';
  for (const form of profile) {
    if (!Array.isArray(form) || (form[0] !== 'allow' && form[0] !== 'deny')) continue;
    const ops = form.slice(1).filter((x): x is string => typeof x === 'string');
    const filters = form.slice(1).filter((x) => Array.isArray(x) && x[0] !== 'with');
    if (!ops.some((o) => opMatches(o, q.op))) continue;
    if (filters.length === 0 || filters.some((f) => filterMatches(f, q))) answer = form[0];
  }
  return answer;
}

let fixture: PolicyFixture;
let policy: SandboxPolicy;
let profile: Sexp[];
let text: string;
const extras = { proxyPort: 40123, privateTmp: '/private-tmp-of-the-command', enforcerPaths: ['/srt/vendor'] };

beforeAll(async () => {
  fixture = await policyFixture();
  policy = fixture.policy;
  const fs = srtSettings(policy, extras).filesystem;
  // srt's manager adds its own write paths (its stdio and /tmp/claude); the home conveniences it drops
  // under a `denyRead` of "/".
  const own = getDefaultWritePaths().filter((p) => !isInside(p, os.homedir()));
  const wrapped = wrapCommandWithSandboxMacOS({
    command: 'true',
    needsNetworkRestriction: true,
    httpProxyPort: extras.proxyPort,
    socksProxyPort: extras.proxyPort,
    readConfig: { denyOnly: fs.denyRead, allowWithinDeny: fs.allowRead },
    writeConfig: { allowOnly: [...own, ...fs.allowWrite], denyWithinAllow: fs.denyWrite },
    allowUnixSockets: [],
    allowAllUnixSockets: false,
    allowLocalBinding: false,
  });
  // `env … /usr/bin/sandbox-exec -p '<profile>' bash -c true`, quoted for a shell.
  const start = wrapped.indexOf("-p '") + 4;
  text = wrapped.slice(start, wrapped.lastIndexOf("' ")).replace(/'"'"'/g, "'");
  profile = parse(text);
});

afterAll(async () => {
  await fixture.close();
});

const read = (p: string) => decide(profile, { op: 'file-read-data', path: p });
const write = (p: string) => decide(profile, { op: 'file-write-data', path: p });
type Bound = Extract<PolicyRow, { source: string }>;
const rows = (a: 'read' | 'write' | 'read-only-over-writable') => policy.rows.filter((r): r is Bound => r.access === a);
const hidden = () => policy.rows.filter((r) => r.access === 'hidden');

describe('the Seatbelt profile of the fixed policy, row by row', () => {
  it('denies by default; processes may exec and fork', () => {
    expect(text.startsWith('(version 1)\n(deny default')).toBe(true);
    expect(decide(profile, { op: 'process-exec' })).toBe('allow');
    expect(decide(profile, { op: 'process-fork' })).toBe('allow');
  });

  it('read rows: readable, and not writable unless a write row holds them', () => {
    for (const row of rows('read')) {
      const at = srtPathOf(row)!;
      expect(read(path.join(at, 'a-file')), at).toBe('allow');
      const held = rows('write').some((w) => isInside(row.path, w.path));
      if (!held) expect(write(path.join(at, 'a-file')), at).toBe('deny');
    }
  });

  it("write rows: readable and writable at their source, never at the person's own path", () => {
    for (const row of rows('write')) {
      expect(write(path.join(row.source, 'new-file')), row.source).toBe('allow');
      expect(read(path.join(row.source, 'new-file')), row.source).toBe('allow');
      if (row.source !== row.path && !isInside(row.path, '/tmp/.loopfleet'))
        expect(write(path.join(row.path, 'new-file')), row.path).toBe('deny');
    }
  });

  it('read-only-over-writable rows: readable, not writable, though the folder around them is', () => {
    const list = rows('read-only-over-writable');
    expect(list.length).toBe(5);
    for (const row of list) {
      expect(read(row.path), row.path).toBe('allow');
      expect(write(row.path), row.path).toBe('deny');
      expect(write(path.join(path.dirname(row.path), 'index.lock')), row.path).toBe('allow');
    }
  });

  it('hidden rows: neither readable nor writable, also inside a shown folder (the private files of /etc)', () => {
    let inShown = 0;
    for (const row of hidden()) {
      const at = srtPathOf(row);
      if (at === null) continue;
      expect(read(at), at).toBe('deny');
      expect(read(path.join(at, 'secret')), at).toBe('deny');
      expect(write(path.join(at, 'planted')), at).toBe('deny');
      if (isInside(at, '/etc')) inShown++;
    }
    expect(inShown).toBeGreaterThan(0);
    // A home with the worktree's siblings: the person's files stay unreadable.
    expect(read('/root/.ssh/id_rsa')).toBe('deny');
    expect(read('/home/someone/.aws/credentials')).toBe('deny');
    expect(read(path.join(fixture.dir, 'ca.pem'))).toBe('allow');
    expect(read(path.join(fixture.dir, 'not-a-row.txt'))).toBe('deny');
  });

  it("private rows: /dev readable, the command's own tmp readable and writable; sandbox-runtime's shared tmp not writable", () => {
    expect(read('/dev/urandom')).toBe('allow');
    expect(write(path.join(extras.privateTmp, 'x'))).toBe('allow');
    expect(read(path.join(extras.privateTmp, 'x'))).toBe('allow');
    for (const shared of SRT_SHARED_TMP) expect(write(path.join(shared, 'x')), shared).toBe('deny');
    expect(read('/tmp/someone-elses-file')).toBe('deny');
  });

  it("the network: out only to the proxy's loopback port; no other port, host or Unix socket", () => {
    expect(decide(profile, { op: 'network-outbound', remote: `localhost:${extras.proxyPort}` })).toBe('allow');
    expect(decide(profile, { op: 'network-outbound', remote: 'localhost:8080' })).toBe('deny');
    expect(decide(profile, { op: 'network-outbound', remote: '*:443' })).toBe('deny');
    expect(text).not.toMatch(/\(allow network\*\)/);
    expect(text).not.toMatch(/\(allow network-outbound \(remote unix-socket/);
    expect(text).not.toContain('(allow system-socket (socket-domain AF_UNIX))');
  });
});
