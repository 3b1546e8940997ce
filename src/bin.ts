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
const { runCli } = await import('./cli.js');
runCli(process.argv.slice(2));
