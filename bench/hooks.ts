/**
 * The module resolution the benchmarks run under. A benchmark imports the engine as the compiler sees it
 * (`../src/core/fleet/fleet.js`) and Node loads the compiled module (`dist/core/fleet/fleet.js`): the
 * benchmarks measure what ships, and TypeScript checks every import against the source. A relative
 * `./x.js` written in bench/ or test/helpers/ loads `x.ts` there, run by Node's type stripping.
 *
 * bench/run.ts imports this module before anything else and starts every benchmark with `--import`
 * {@link HOOKS}; a benchmark that starts a process of itself passes {@link HOOKS} on the same way. One
 * benchmark alone: `node --import ./bench/hooks.ts bench/tui.ts`.
 */
import { registerHooks } from 'node:module';

/** this module, for `node --import` */
export const HOOKS = import.meta.url;

const SRC = new URL('../src/', import.meta.url).href;
const DIST = new URL('../dist/', import.meta.url).href;
/** the folders whose `.ts` files Node runs as they are: the benchmarks and the test helpers they use */
const STRIPPED = [new URL('./', import.meta.url).href, new URL('../test/helpers/', import.meta.url).href];

const inStripped = (url: string) => STRIPPED.some((folder) => url.startsWith(folder));

registerHooks({
  resolve(specifier, context, next) {
    const parent = context.parentURL;
    if (parent === undefined || !inStripped(parent) || !(specifier.startsWith('./') || specifier.startsWith('../'))) {
      return next(specifier, context);
    }
    const url = new URL(specifier, parent).href;
    if (url.startsWith(SRC)) return next(DIST + url.slice(SRC.length), context);
    if (inStripped(url) && url.endsWith('.js')) return next(`${url.slice(0, -'.js'.length)}.ts`, context);
    return next(specifier, context);
  },
});
