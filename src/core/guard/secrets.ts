/**
 * Secret-shaped content in the lines a diff adds. Each detector is specific enough to be rare in code:
 * well-known token formats, private keys, credentials in URLs, high-entropy values assigned to names like
 * `*_KEY`/`*_TOKEN`/`PASSWORD`, lines copied from /etc/shadow or /etc/passwd, and base64 blobs that decode
 * to any of these. Obvious placeholders (`API_KEY=xxx`, `process.env.API_KEY`, `${TOKEN}`) are not secrets.
 */

const TOKENS: Array<[string, RegExp]> = [
  ['Anthropic API key', /sk-ant-[A-Za-z0-9_-]{20,}/],
  ['OpenAI API key', /\bsk-(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,}/],
  ['AWS access key id', /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/],
  ['GitHub token', /\bgh[pousr]_[A-Za-z0-9]{36,}|\bgithub_pat_[A-Za-z0-9_]{22,}/],
  ['Slack token', /\bxox[abposr]-[A-Za-z0-9-]{10,}/],
  ['Google API key', /\bAIza[0-9A-Za-z_-]{35}/],
  ['Stripe key', /\b[rs]k_live_[0-9A-Za-z]{20,}/],
  ['JSON web token', /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}/],
  ['private key', /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----/],
];

const URL_CREDENTIALS = /\b[a-z][a-z0-9+.-]{1,30}:\/\/[^\s:/@'"`<>]+:([^\s/@'"`<>]+)@[^\s/'"`<>@]+/gi;
const SHADOW_HASH = /^[a-z_][\w.-]*\$?:\$(?:1|2[abxy]?|5|6|7|y|gy|sha1|md5|argon2\w*)\$[^:\s]{8,}:/i;
const SHADOW_LINE = /^[a-z_][\w.-]*\$?:[^:\s]*:\d*:\d*:\d*:\d*:\d*:\d*:\d*$/i;
const PASSWD_LINE = /^[a-z_][\w.-]*\$?:[^:\s]*:\d+:\d+:[^:]*:\/[^:]*:\/[^:\s]*$/i;
const SECRET_NAME = /(?:key|token|secret|password|passwd|pwd|credentials?|auth)$/i;
// A name starts only where no name character stands before it, and is at most 128 characters: otherwise one
// long word (a minified line, a 61 KB run of letters) is tried from each of its characters, quadratic time.
const ASSIGNMENT =
  /(?<![A-Za-z0-9_.-])([A-Za-z_][A-Za-z0-9_.-]{0,127})["']?\s*(?::=|=>|=|:)\s*(["'`]?)([^\s"'`,;]+)\2/g;
const PLACEHOLDER =
  /^(?:x+|\*+|\.+|-+|_+|0+|changeme|change_?me|your[\w-]*|example[\w-]*|dummy[\w-]*|fake[\w-]*|test[\w-]*|placeholder|redacted|secret|password|none|null|nil|undefined|true|false|todo)$/i;
const BASE64_TOKEN = /[A-Za-z0-9+/_-]{40,}={0,2}/g;
const BASE64_LINE = /^\s*[A-Za-z0-9+/_-]{16,}={0,2}\s*$/;

/** Shannon entropy in bits per character. */
export function entropy(text: string): number {
  const counts = new Map<string, number>();
  for (const ch of text) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) bits -= (n / text.length) * Math.log2(n / text.length);
  return bits;
}

function placeholder(value: string): boolean {
  return (
    PLACEHOLDER.test(value) ||
    /^(?:\$|%|<|\{\{|\[)/.test(value) ||
    /^(?:process\.env|os\.environ|env\.|import\.meta\.env)/.test(value) ||
    value.includes('(') ||
    new Set(value).size <= 2
  );
}

/** A value that looks generated: long enough, varied enough, letters and digits mixed. */
function randomLooking(value: string, password: boolean): boolean {
  if (placeholder(value)) return false;
  const mixed = /[A-Za-z]/.test(value) && /[0-9]/.test(value);
  if (password) return value.length >= 8 && entropy(value) >= 2.5;
  return value.length >= 12 && mixed && entropy(value) >= 3.0;
}

function assignments(line: string): string[] {
  const found: string[] = [];
  const body = line.replace(/^\s*(?:export\s+)?/, '');
  for (const m of body.matchAll(ASSIGNMENT)) {
    const name = m[1]!.split(/[.-]/).at(-1)!;
    if (!SECRET_NAME.test(name)) continue;
    const quoted = m[2] !== '';
    // An unquoted value is a reference in code (`token = other`); only `NAME=value` lines (.env, ini, yaml) hold literals.
    if (!quoted && m.index !== 0) continue;
    if (randomLooking(m[3]!, /pass|pwd/i.test(name))) found.push(`high-entropy value assigned to ${m[1]}`);
  }
  return found;
}

/** What in one line looks like a secret: the names of the detectors that fired. */
export function secretsInLine(line: string): string[] {
  const found: string[] = [];
  for (const [name, pattern] of TOKENS) if (pattern.test(line)) found.push(name);
  for (const m of line.matchAll(URL_CREDENTIALS)) {
    if (!placeholder(m[1]!)) found.push('credentials in a URL');
  }
  if (SHADOW_HASH.test(line.trim()) || SHADOW_LINE.test(line.trim())) found.push('line copied from /etc/shadow');
  found.push(...assignments(line));
  return found;
}

/** Secrets in a text (all its lines), passwd-like runs included. */
export function secretsInText(text: string): string[] {
  const lines = text.split(/\r?\n/);
  const found = lines.flatMap(secretsInLine);
  if (lines.filter((l) => PASSWD_LINE.test(l.trim())).length >= 3) found.push('lines copied from /etc/passwd');
  return found;
}

function decodedSecrets(blob: string): string[] {
  const bytes = Buffer.from(blob.replace(/\s+/g, ''), 'base64');
  if (bytes.length < 16) return [];
  const text = bytes.toString('latin1');
  const printable = text.split('').filter((c) => /[\x20-\x7e\t\r\n]/.test(c)).length;
  if (printable / text.length < 0.9) return [];
  return [...new Set(secretsInText(text))];
}

/** The lines each file gains in a unified diff (`+++ b/path` headers; deleted files gain none). */
export function addedLines(diff: string): Map<string, string[]> {
  const files = new Map<string, string[]>();
  let current: string[] | null = null;
  for (const line of diff.split('\n')) {
    if (line.startsWith('diff --git ')) {
      current = null;
      continue;
    }
    if (line.startsWith('+++ ')) {
      const name = line.slice(4);
      if (name === '/dev/null') current = null;
      else {
        current = [];
        files.set(name.replace(/^"?b\//, '').replace(/"$/, ''), current);
      }
      continue;
    }
    if (current !== null && line.startsWith('+')) current.push(line.slice(1));
  }
  return files;
}

/** `guard: <path>: secret-shaped content added (<kind>)` for every secret-shaped addition, once per file and kind. */
export function findSecrets(diff: string, exempt: (path: string) => boolean = () => false): string[] {
  const found: string[] = [];
  for (const [file, lines] of addedLines(diff)) {
    if (exempt(file)) continue;
    const kinds = new Set(secretsInText(lines.join('\n')));
    // base64 inside a line, and base64 wrapped over consecutive lines (as `base64` prints it)
    const blobs: string[] = lines.flatMap((l) => [...l.matchAll(BASE64_TOKEN)].map((m) => m[0]));
    let run: string[] = [];
    for (const line of [...lines, '']) {
      if (BASE64_LINE.test(line)) run.push(line.trim());
      else {
        if (run.length > 1) blobs.push(run.join(''));
        run = [];
      }
    }
    for (const blob of blobs) for (const kind of decodedSecrets(blob)) kinds.add(`base64 blob decoding to a ${kind}`);
    for (const kind of kinds) found.push(`guard: ${file}: secret-shaped content added (${kind})`);
  }
  return found;
}

/** Secrets in the printable runs of a binary file (a tar of /etc/shadow, a key inside an archive). */
export function findSecretsInBinary(path: string, content: string): string[] {
  const strings = (content.match(/[\x20-\x7e\t]{8,}/g) ?? []).join('\n');
  return [...new Set(secretsInText(strings))].map(
    (kind) => `guard: ${path}: secret-shaped content added (${kind}, in a binary file)`,
  );
}
