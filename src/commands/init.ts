import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { exists } from '../adapters/fs/paths.js';
import { join } from 'node:path';
import { parseRemoteUrl } from '../adapters/forge/select.js';
import { SimpleGitAdapter } from '../adapters/git/simple-git.js';
import { WORK_DIR } from '../domain/layout.js';
import { discoverProject, type Proposal } from './init-detect.js';
import { BACKLOG_FILE, type Repo } from './repo.js';
import { PACKAGE_ROOT } from './services.js';

const AGENTS_README = `# Role overrides

loopfleet ships three roles: explorer, implementer and verifier (the reviewer). To change one for this
repository, put a file of the same name here (\`agents/implementer.md\`, ...) in the Claude Code subagent
format: YAML front matter (\`name\`, \`description\`, \`model\`, \`tools\`, \`max_turns\`, \`max_tokens\`,
\`command\`) and a Markdown body that is the role's system prompt. A file here wins over the packaged one.

The packaged definitions to start from are in: ${'${PACKAGE_AGENTS}'}

\`command:\` lets an external CLI agent play the role instead of the API, e.g.
\`command: claude -p --output-format json\` (see docs/roles-and-agents.md in loopfleet for tested presets).
`;

/** A YAML plain scalar where it can be one (`npm test`), quoted where YAML would read it otherwise. */
function yamlValue(command: string): string {
  return /^[\s\[\]{}&*!|>'"%@`#,?:-]|: | #|\s$/.test(command) ? JSON.stringify(command) : command;
}

/**
 * The template with `check:` and `setup:` written out (uncommented) where the project names them, each
 * followed by a comment saying where it came from; the commented default stays where it names none.
 */
export function fillTemplate(template: string, found: { check: Proposal | null; setup: Proposal | null }): string {
  let out = template;
  for (const key of ['check', 'setup'] as const) {
    const p = found[key];
    if (p === null) continue;
    const line = new RegExp(`^# ${key}: .*$`, 'm');
    if (!line.test(out)) throw new Error(`init-template.md has no \`# ${key}:\` line`);
    const setting = `${key}: ${yamlValue(p.command)}`;
    out = out.replace(line, () => `${setting.padEnd(27)} # ${p.source}`);
  }
  return out;
}

/** The forges init recognises a remote of by its host alone, and the `tracker:` type each one's issues are. */
const TRACKER_HOSTS: Record<string, { type: 'github' | 'gitlab'; name: string }> = {
  'github.com': { type: 'github', name: 'GitHub' },
  'ssh.github.com': { type: 'github', name: 'GitHub' },
  'gitlab.com': { type: 'gitlab', name: 'GitLab' },
  'altssh.gitlab.com': { type: 'gitlab', name: 'GitLab' },
};

/**
 * The tracker line init offers when `origin` is a GitHub or GitLab repository: commented out, so nothing
 * changes until the person removes the `#`; null for any other remote (or none).
 */
export function trackerOffer(remoteUrl: string | null): { line: string; repo: string; forge: string } | null {
  const location = remoteUrl === null ? null : parseRemoteUrl(remoteUrl);
  const forge = location === null ? undefined : TRACKER_HOSTS[location.host];
  if (location === null || forge === undefined) return null;
  const repo = location.path
    .split('/')
    .filter((p) => p !== '')
    .join('/');
  return {
    repo,
    forge: forge.name,
    line: `# tracker: { type: ${forge.type}, label: loopfleet }   # ${repo} is on ${forge.name}: its issues labelled loopfleet become tasks`,
  };
}

/** `text` with `line` as the last line of its front matter. */
export function withFrontMatterLine(text: string, line: string): string {
  const end = text.indexOf('\n---', 4);
  return end < 0 ? text : `${text.slice(0, end)}\n${line}${text.slice(end)}`;
}

/** `loopfleet init`: BACKLOG.md, agents/ and the ignore rule. Never overwrites a file. */
export async function init(repo: Repo, out: (line: string) => void): Promise<number> {
  const backlog = join(repo.root, BACKLOG_FILE);
  if (await exists(backlog)) {
    out(`${BACKLOG_FILE} exists already; left as it is`);
  } else {
    const found = await discoverProject(repo.root);
    const template = await readFile(join(PACKAGE_ROOT, 'backlog', 'init-template.md'), 'utf8');
    const offer = trackerOffer(await new SimpleGitAdapter(repo.root).remoteUrl('origin'));
    const text = fillTemplate(template, found);
    await writeFile(backlog, offer === null ? text : withFrontMatterLine(text, offer.line), { flag: 'wx' });
    for (const key of ['check', 'setup'] as const) {
      const p = found[key];
      out(
        p === null
          ? `${key}: nothing in the repository names one; left commented out in ${BACKLOG_FILE}`
          : `${key}: ${p.command}   (from ${p.source})`,
      );
    }
    if (offer !== null)
      out(
        `tracker: origin is ${offer.repo} on ${offer.forge}; remove the # before tracker: in ${BACKLOG_FILE} to run its issues labelled loopfleet`,
      );
    out(
      `wrote ${BACKLOG_FILE}: add tasks as \`- [ ] Title\` items, then run \`loopfleet\` or \`loopfleet --overnight\``,
    );
  }
  const agents = join(repo.root, 'agents');
  const readme = join(agents, 'README.md');
  if (!(await exists(readme))) {
    await mkdir(agents, { recursive: true });
    await writeFile(readme, AGENTS_README.replace('${PACKAGE_AGENTS}', join(PACKAGE_ROOT, 'agents')));
    out('wrote agents/README.md: how to override a role for this repository');
  }
  const excludeFile = await new SimpleGitAdapter(repo.root).ensureExcluded(`/${WORK_DIR}/`);
  out(`${WORK_DIR}/ is ignored through ${excludeFile}`);
  return 0;
}
