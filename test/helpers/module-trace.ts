/**
 * Loaded by a child `node --import` to list every module the process resolves: at exit, one URL per line to
 * the file named by LOOPFLEET_MODULE_TRACE. Only erasable TypeScript: Node strips the types itself.
 */
import { writeFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

const out = process.env['LOOPFLEET_MODULE_TRACE'];
if (out === undefined) throw new Error('module-trace: LOOPFLEET_MODULE_TRACE names no file');
const seen = new Set<string>();
registerHooks({
  resolve(specifier, context, next) {
    const resolved = next(specifier, context);
    seen.add(resolved.url);
    return resolved;
  },
});
process.on('exit', () => writeFileSync(out, [...seen].join('\n')));
