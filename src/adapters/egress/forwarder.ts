/**
 * The inside half of a CLI agent's network: a small Node program, started in the sandbox before the agent,
 * that listens on loopback and carries every connection over the bind-mounted Unix socket of the host's
 * egress proxy ({@link startEgressProxy}):
 * - `tunnels`: a loopback port that stands for one allowed endpoint (a local model server keeps its port,
 *   so `ANTHROPIC_BASE_URL=http://127.0.0.1:<port>` works unchanged) — each connection opens a CONNECT tunnel;
 * - `proxyPort`: an HTTP proxy port for HTTPS_PROXY / HTTP_PROXY — bytes are passed through as they are,
 *   and the host proxy decides.
 * Once every port listens it runs the agent (stdio inherited) and exits with its status.
 *
 * The program is JavaScript in a string so that it needs no file of its own inside the sandbox.
 */

export interface ForwarderConfig {
  socket: string;
  tunnels: Array<{ port: number; target: string }>;
  proxyPort: number | null;
  argv: string[];
}

export const FORWARDER_SOURCE = String.raw`
const net = require('node:net');
const { spawn } = require('node:child_process');
const cfg = JSON.parse(process.argv[1]);
function tunnel(client, target) {
  const up = net.connect(cfg.socket);
  let buf = Buffer.alloc(0);
  const onData = (d) => {
    buf = Buffer.concat([buf, d]);
    const end = buf.indexOf('\r\n\r\n');
    if (end < 0) return;
    up.off('data', onData);
    if (!/^HTTP\/1\.[01] 200/.test(buf.subarray(0, end).toString('latin1'))) { client.destroy(); up.destroy(); return; }
    const rest = buf.subarray(end + 4);
    if (rest.length > 0) client.write(rest);
    up.pipe(client); client.pipe(up);
  };
  up.on('data', onData);
  up.on('connect', () => up.write('CONNECT ' + target + ' HTTP/1.1\r\nHost: ' + target + '\r\n\r\n'));
  up.on('error', () => client.destroy());
  client.on('error', () => up.destroy());
  client.on('close', () => up.destroy());
  up.on('close', () => client.destroy());
}
function pass(client) {
  const up = net.connect(cfg.socket);
  up.pipe(client); client.pipe(up);
  up.on('error', () => client.destroy());
  client.on('error', () => up.destroy());
  client.on('close', () => up.destroy());
  up.on('close', () => client.destroy());
}
const servers = cfg.tunnels.map((t) => [t.port, (c) => tunnel(c, t.target)]);
if (cfg.proxyPort !== null) servers.push([cfg.proxyPort, pass]);
let pending = servers.length;
const start = () => {
  const child = spawn(cfg.argv[0], cfg.argv.slice(1), { stdio: 'inherit' });
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(sig, () => child.kill(sig));
  child.on('error', (e) => { process.stderr.write('cannot run ' + cfg.argv[0] + ': ' + e.message + '\n'); process.exit(127); });
  child.on('exit', (code, signal) => process.exit(code === null ? 128 + (require('node:os').constants.signals[signal] || 1) : code));
};
if (pending === 0) start();
for (const [port, handle] of servers) {
  const s = net.createServer(handle);
  s.on('error', (e) => { process.stderr.write('loopfleet egress forwarder: port ' + port + ': ' + e.message + '\n'); process.exit(125); });
  s.listen(port, '127.0.0.1', () => { if (--pending === 0) start(); });
}
`;

/** `node -e <program> <config>`: the argv that starts the forwarder, which then runs `config.argv`. */
export function forwarderArgv(node: string, config: ForwarderConfig): string[] {
  return [node, '-e', FORWARDER_SOURCE, JSON.stringify(config)];
}
