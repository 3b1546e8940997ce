/**
 * `loopfleet doctor` tries setup's network as the person's shell would: the registry from their ~/.npmrc
 * (read by the real npm), a loopback HTTPS server signed by a private CA, trusted only when
 * NODE_EXTRA_CA_CERTS names that CA.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { doctor } from '../../src/commands/doctor.js';
import { findRepo } from '../../src/commands/repo.js';
import { backlog } from '../helpers/fleet-harness.js';
import { makeRepo } from '../helpers/git-repo.js';
import { privateCaServer } from '../helpers/private-ca.js';

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

async function setupLines(extra: Record<string, string>): Promise<{ lines: string[]; url: string; port: number }> {
  const server = await privateCaServer();
  cleanups.push(() => server.close());
  const home = await mkdtemp(path.join(os.tmpdir(), 'lf-doctor-home-'));
  cleanups.push(() => rm(home, { recursive: true, force: true }));
  await writeFile(path.join(home, '.npmrc'), `registry=${server.url}\n`);
  const r = await makeRepo({ 'BACKLOG.md': backlog('setup: npm ci', '- [ ] T-1 One') });
  cleanups.push(r.cleanup);
  const lines: string[] = [];
  // The person's environment, built from scratch: not this test process's CA or npm settings.
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    ANTHROPIC_API_KEY: 'k',
    ...(extra.CA === undefined ? {} : { NODE_EXTRA_CA_CERTS: server.caFile }),
  };
  await doctor(await findRepo(r.root), env, (l) => lines.push(l));
  return { lines: lines.filter((l) => l.includes('setup network')), url: server.url, port: server.port };
}

describe('doctor: setup network', () => {
  it('says TLS is untrusted, naming the variable to set, when the registry is signed by a CA the person has not named', async () => {
    const { lines, url } = await setupLines({});
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(
        `^FAIL fleet: setup network: npm registry ${url} \\(for \`npm ci\`\\): TLS untrusted \\((SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY)`,
      ),
    );
    expect(lines[0]).toContain('set NODE_EXTRA_CA_CERTS to the CA bundle');
  });

  it('says the registry is reachable and trusted once NODE_EXTRA_CA_CERTS names the CA, and that network: does not list it', async () => {
    const { lines, url, port } = await setupLines({ CA: 'yes' });
    expect(lines).toEqual([
      `ok   fleet: setup network: npm registry ${url} reachable, TLS trusted; not under network:, so a setup in the sandbox cannot reach it (add 127.0.0.1:${port})`,
    ]);
  });
});
