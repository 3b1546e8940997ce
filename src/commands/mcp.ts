/**
 * `loopfleet mcp`: the MCP server over stdio, for the repository it is started in.
 *
 * Invariant: stdout carries the protocol and nothing else. The server's own lines go to stderr, and so does
 * anything a library would print with `console.log` while the server runs.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { scanGitConfig } from '../adapters/git/config-scan.js';
import { neutraliseConfig } from '../adapters/git/exec.js';
import { visible } from '../domain/sanitize.js';
import { createMcpServer } from '../mcp/server.js';
import { FleetMcpBackend } from './mcp-backend.js';
import { EXIT_INTERRUPTED } from './overnight.js';
import type { Repo } from './repo.js';

function logLine(line: string): void {
  process.stderr.write(`loopfleet mcp: ${visible(line)}\n`);
}

/** Serves until the client closes stdin (or a signal ends a merge, discard or retry: exit 130). */
export async function mcp(repo: Repo, env: NodeJS.ProcessEnv, version: string): Promise<number> {
  for (const method of ['log', 'info', 'debug'] as const) console[method] = console.error;
  // As for a run: settings of the person's git config that resolve into a work tree are off for every git here.
  neutraliseConfig((await scanGitConfig(repo.root)).overrides);
  let interrupted = false;
  const backend = new FleetMcpBackend(repo, env, () => {
    interrupted = true;
    // The answer to the interrupted call goes out first; then the server ends, as the CLI would.
    setImmediate(() => void server.close());
  });
  const server = createMcpServer(backend, version, logLine);
  const closed = new Promise<void>((resolve) => {
    server.server.onclose = resolve;
  });
  await server.connect(new StdioServerTransport(process.stdin, process.stdout));
  // The client closed its end of stdin: nothing more can be asked.
  const end = () => void server.close();
  process.stdin.once('end', end);
  process.stdin.once('close', end);
  await closed;
  return interrupted ? EXIT_INTERRUPTED : 0;
}
