#!/usr/bin/env node
/**
 * The `loopfleet` command. It checks the Node.js version before anything else is loaded: the dependencies
 * need Node.js 22 or newer and would otherwise fail with an error that says nothing useful.
 */
const major = Number(process.versions.node.split('.')[0]);
if (major < 22) {
  process.stderr.write(`loopfleet: Node.js 22 or newer is needed; this is ${process.version} (${process.execPath})\n`);
  process.exit(2);
}
// V8's compiled code of the modules below, kept between runs: a command starts in about three quarters of
// the time. In the user's own cache folder (never a shared /tmp another user could fill); NODE_COMPILE_CACHE
// wins when set, and a folder that cannot be written only costs the speed-up.
const { enableCompileCache } = await import('node:module');
const { homedir } = await import('node:os');
const { join } = await import('node:path');
enableCompileCache?.(join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'loopfleet', 'compile-cache'));
const { runCli } = await import('./cli.js');
runCli(process.argv.slice(2));
