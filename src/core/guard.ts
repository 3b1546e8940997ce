import ignore from 'ignore';

/**
 * Guard checks on an attempt's diff, run before the check command: they stop changes no check would catch.
 * Each returns the reasons the attempt must fail; empty means the diff may be verified.
 */

export interface GuardInput {
  numstat: Array<{ path: string; added: number; deleted: number }>;
  /** unified diff text, to look for secrets in added lines */
  diff: string;
  maxFiles: number;
  maxLines: number;
  protect: string[];
  /** paths or patterns the task names in `files:`; they are exempt from `protect` */
  allowed: string[];
}

/** Shapes of credentials that must never be committed by an agent. Each is specific enough to be rare in code. */
const SECRET_PATTERNS: Array<[string, RegExp]> = [
  ['Anthropic API key', /sk-ant-[A-Za-z0-9_-]{20,}/],
  ['OpenAI API key', /\bsk-(proj-)?[A-Za-z0-9]{32,}\b/],
  ['AWS access key id', /\b(AKIA|ASIA)[0-9A-Z]{16}\b/],
  ['GitHub token', /\bgh[pousr]_[A-Za-z0-9]{36,}\b/],
  ['Slack token', /\bxox[abpors]-[A-Za-z0-9-]{10,}\b/],
  ['private key', /-----BEGIN ([A-Z]+ )?PRIVATE KEY-----/],
  ['Google API key', /\bAIza[0-9A-Za-z_-]{35}\b/],
  ['password or secret assignment', /\b(password|passwd|secret|api[_-]?key|auth[_-]?token)\b\s*[:=]\s*["'][^"'\s]{12,}["']/i],
];

export function findSecrets(diff: string): string[] {
  const found: string[] = [];
  let file = '';
  for (const line of diff.split('\n')) {
    if (line.startsWith('+++ ')) {
      file = line.slice(4).replace(/^b\//, '');
      continue;
    }
    if (!line.startsWith('+')) continue;
    for (const [name, pattern] of SECRET_PATTERNS) {
      if (pattern.test(line)) found.push(`${file}: a likely ${name} was added`);
    }
  }
  return [...new Set(found)];
}

export function guardDiff(input: GuardInput): string[] {
  const reasons: string[] = [];
  if (input.numstat.length > input.maxFiles) {
    reasons.push(`the diff changes ${input.numstat.length} files, more than max_files ${input.maxFiles}`);
  }
  const lines = input.numstat.reduce((sum, f) => sum + f.added + f.deleted, 0);
  if (lines > input.maxLines) {
    reasons.push(`the diff changes ${lines} lines, more than max_lines ${input.maxLines}`);
  }
  const protectedPaths = ignore().add(input.protect);
  const allowed = ignore().add(input.allowed);
  for (const { path } of input.numstat) {
    if (protectedPaths.ignores(path) && !(input.allowed.length > 0 && allowed.ignores(path))) {
      reasons.push(`${path} is protected (protect:); name it in the task's files: to allow the change`);
    }
  }
  reasons.push(...findSecrets(input.diff));
  return reasons;
}
