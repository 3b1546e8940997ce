/**
 * A `command:` agent whose program the sandbox does not mount (a folder of the person's own, named by path):
 * the role fails before it starts, naming the program, why and what to do — and doctor says the same for
 * every role. Real bubblewrap, real processes.
 */
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CliAgentClient } from '../../../src/adapters/model/cli-agent.js';
import { ExecaRunner } from '../../../src/adapters/sandbox/execa-runner.js';
import { doctor } from '../../../src/commands/doctor.js';
import { findRepo } from '../../../src/commands/repo.js';
import type { AgentRequest } from '../../../src/ports/model.js';
import { backlog } from '../../helpers/fleet-harness.js';
import { makeRepo } from '../../helpers/git-repo.js';

const available = await new ExecaRunner().sandboxAvailable();

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

/** `<dir>/my-agent` in a folder the sandbox does not mount (/var/tmp stands for /home/me/bin). */
async function ownBin(): Promise<{ dir: string; program: string }> {
  const dir = await mkdtemp('/var/tmp/lf-bin-');
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const program = path.join(dir, 'my-agent');
  await writeFile(program, '#!/bin/sh\ncat >/dev/null\necho hello from my-agent\n');
  await chmod(program, 0o755);
  return { dir, program };
}

async function workdir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'lf-cmd-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

function request(command: string, dir: string, PATH: string): AgentRequest {
  return {
    role: 'implementer',
    model: 'm',
    system: 's',
    prompt: 'p',
    workdir: dir,
    access: 'write',
    shell: false,
    env: { PATH },
    maxTurns: 1,
    maxTokens: 100,
    signal: new AbortController().signal,
    beforeCall: () => undefined,
    command,
    timeoutMs: 20_000,
  };
}

const client = () => new CliAgentClient({ processRunner: new ExecaRunner(), sandboxAvailable: true });

describe.runIf(available)('a command agent the sandbox cannot see', () => {
  it('named by a path outside the mounted folders: the role fails naming the program, why and what to do', async () => {
    const { dir, program } = await ownBin();
    const work = await workdir();
    const run = client().runAgent(request(program, work, process.env.PATH ?? '/usr/bin:/bin'), () => undefined);
    await expect(run).rejects.toMatchObject({ name: 'AgentSetupError', reason: 'missing-binary' });
    const message = await run.catch((e: Error) => e.message);
    expect(message).toContain(`runs ${program}, which the sandbox cannot see`);
    expect(message).toMatch(/mounts only the system folders .* the folders on PATH .* and the worktree/);
    expect(message).toContain(`Install it under /usr/local/bin, or put ${dir} on PATH`);
  });

  it('its folder on PATH and the bare name: it runs', async () => {
    const { dir } = await ownBin();
    const work = await workdir();
    const result = await client().runAgent(
      request('my-agent', work, `${dir}:${process.env.PATH ?? '/usr/bin:/bin'}`),
      () => undefined,
    );
    expect(result.text).toBe('hello from my-agent');
  });

  it('a link on PATH into a folder the sandbox does not mount: named, with where it leads', async () => {
    const { program } = await ownBin();
    const linkDir = await mkdtemp('/var/tmp/lf-links-');
    cleanups.push(() => rm(linkDir, { recursive: true, force: true }));
    await symlink(program, path.join(linkDir, 'my-agent'));
    const work = await workdir();
    const message = await client()
      .runAgent(request('my-agent --fast', work, `${linkDir}:${process.env.PATH ?? '/usr/bin:/bin'}`), () => undefined)
      .then(
        () => 'ran',
        (e: Error) => e.message,
      );
    expect(message).toContain(
      `runs ${path.join(linkDir, 'my-agent')} (a link to ${program}), which the sandbox cannot see`,
    );
  });

  it('doctor checks it for every role', async () => {
    const { program } = await ownBin();
    const r = await makeRepo({
      'BACKLOG.md': backlog('review: true', '- [ ] T-1 One'),
      'agents/verifier.md': `---\nname: verifier\ncommand: ${program}\n---\nReview.\n`,
    });
    cleanups.push(r.cleanup);
    await mkdir(path.join(r.root, 'agents'), { recursive: true });
    const lines: string[] = [];
    const code = await doctor(await findRepo(r.root), { ...process.env, ANTHROPIC_API_KEY: 'k' }, (l) => lines.push(l));
    expect(code).toBe(1);
    expect(lines.find((l) => l.includes('verifier: backend'))).toMatch(
      new RegExp(`^FAIL verifier: backend: the verifier's command .* runs ${program}, which the sandbox cannot see`),
    );
  });
});
