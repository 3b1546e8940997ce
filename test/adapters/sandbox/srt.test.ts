/**
 * sandbox-runtime's Linux path for real: a command run through `srt` with loopfleet's settings file
 * (rendered from the command's policy) and loopfleet's egress proxy — the wiring macOS uses, with
 * bubblewrap under srt instead of Seatbelt. It needs bubblewrap, socat and ripgrep (srt's own
 * dependencies on Linux).
 */
import { access, mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { startEgressProxy } from '../../../src/adapters/egress/proxy.js';
import { sandboxPolicy } from '../../../src/adapters/sandbox/policy.js';
import { SRT_SHARED_TMP } from '../../../src/adapters/sandbox/srt-settings.js';
import { srtCommand } from '../../../src/adapters/sandbox/srt.js';
import { git, makeRepo } from '../../helpers/git-repo.js';
import { cleanupsAfterEach, loopbackService } from '../../helpers/loopback-service.js';

const tools = await Promise.all(
  ['/usr/bin/bwrap', '/usr/bin/socat', '/usr/bin/rg'].map((p) =>
    access(p).then(
      () => true,
      () => false,
    ),
  ),
);

const cleanups = cleanupsAfterEach();

const serve = (name: string, hits: string[]) =>
  loopbackService(cleanups, (url) => hits.push(`${name} ${url}`), `hello from ${name}`);

/** Node's fetch of each URL through the proxy variables, one line each; and a direct connection. */
function probe(urls: string[], direct: number): string {
  const js = `(async () => {
    for (const u of ${JSON.stringify(urls)}) {
      try { const r = await fetch(u); console.log('FETCH', u, r.status, await r.text()); }
      catch (e) { console.log('FETCH', u, 'error', String(e.cause?.message ?? e.message)); }
    }
    await new Promise((done) => {
      const s = require('node:net').connect(${direct}, '127.0.0.1');
      s.on('connect', () => { console.log('DIRECT connected'); s.destroy(); done(); });
      s.on('error', (e) => { console.log('DIRECT', e.code); done(); });
    });
  })()`;
  return `NODE_USE_ENV_PROXY=1 ${process.execPath} -e '${js.replace(/'/g, `'\\''`)}'`;
}

describe.runIf(process.platform === 'linux')(
  'sandbox-runtime (srt) on Linux, with loopfleet settings and egress proxy',
  () => {
    it('needs bubblewrap, socat and ripgrep installed', () => {
      expect(tools, 'install bubblewrap, socat and ripgrep (Debian: apt-get install bubblewrap socat ripgrep)').toEqual(
        [true, true, true],
      );
    });

    it.runIf(tools.every(Boolean))(
      'reaches the allowed host through the proxy, nothing else; writes only the worktree',
      async () => {
        const repo = await makeRepo({ 'README.md': 'hi\n' });
        cleanups.push(repo.cleanup);
        const worktree = path.join(repo.root, '.loop-worktrees', 'T-1');
        await git(repo.root, 'worktree', 'add', '--quiet', '-b', 'loop/T-1', worktree);
        const outside = await mkdtemp(path.join(os.tmpdir(), 'loopfleet-srt-outside-'));
        cleanups.push(() => rm(outside, { recursive: true, force: true }));

        const hits: string[] = [];
        const allowedPort = await serve('allowed', hits);
        const otherPort = await serve('other', hits);
        const proxy = await startEgressProxy([{ host: '127.0.0.1', port: allowedPort }]);
        cleanups.push(() => proxy.close());

        const node = path.dirname(process.execPath);
        const policy = await sandboxPolicy({
          cwd: worktree,
          writable: [],
          env: { PATH: `${node}:/usr/bin:/bin`, LANG: 'C.UTF-8' },
          mounts: [
            { src: process.execPath, dest: process.execPath, readOnly: true },
            { src: proxy.socketPath, dest: '/tmp/.loopfleet/egress.sock', readOnly: true },
          ],
          allowedHosts: [`127.0.0.1:${allowedPort}`],
        });
        expect(policy.network.proxySocket).toBe(proxy.socketPath);
        const script = [
          probe([`http://127.0.0.1:${allowedPort}/ok`, `http://127.0.0.1:${otherPort}/no`], otherPort),
          `echo inside > made-inside.txt && echo WROTE inside`,
          `(echo outside > ${outside}/made-outside.txt) 2>/dev/null && echo WROTE outside || echo REFUSED outside`,
          `(echo shared > ${SRT_SHARED_TMP[0]}/loopfleet-probe) 2>/dev/null && echo WROTE shared || echo REFUSED shared`,
          `echo "TMPDIR=$TMPDIR HOME=$HOME NO_PROXY=\${NO_PROXY-unset}"`,
          `(echo ref > ${path.join(repo.root, '.git', 'refs', 'heads', 'evil')}) 2>/dev/null && echo WROTE ref || echo REFUSED ref`,
        ].join('\n');
        const srt = await srtCommand(policy, script, { node: process.execPath, proxySocket: proxy.socketPath });
        cleanups.push(() => srt.close());
        const result = await execa(srt.file, srt.args, {
          cwd: worktree,
          env: srt.env,
          extendEnv: false,
          reject: false,
          all: true,
          timeout: 60_000,
          stdin: 'ignore',
        });
        const out = result.all ?? '';

        expect(out, out).toContain(`FETCH http://127.0.0.1:${allowedPort}/ok 200 hello from allowed`);
        // Refused by the proxy: a 403 to the forwarded request, or to the CONNECT tunnel Node's fetch opens.
        expect(out).toMatch(new RegExp(`FETCH http://127\\.0\\.0\\.1:${otherPort}/no (403|error)`));
        expect(out).toMatch(/DIRECT (ECONNREFUSED|ENETUNREACH|EPERM|EACCES)/);
        expect(hits).toEqual(['allowed /ok']);
        expect(proxy.refused).toContain(`127.0.0.1:${otherPort}`);

        expect(out).toContain('WROTE inside');
        expect(await readFile(path.join(worktree, 'made-inside.txt'), 'utf8')).toBe('inside\n');
        expect(out).toContain('REFUSED outside');
        expect(await readdir(outside)).toEqual([]);
        expect(out).toContain('REFUSED shared');

        // The command's own TMPDIR and HOME, no NO_PROXY: the redirections srt cannot express.
        expect(out).toMatch(/TMPDIR=\/\S+\/tmp HOME=\/\S+\/tmp\/home NO_PROXY=unset/);
        // The repository's own folder is read-only: no branch can be made from inside.
        expect(out).toContain('REFUSED ref');
        await expect(stat(path.join(repo.root, '.git', 'refs', 'heads', 'evil'))).rejects.toThrow(/ENOENT/);
      },
      90_000,
    );
  },
);
