/**
 * React's production build for the interactive view, without changing the environment loopfleet hands on.
 *
 * React (and Ink's reconciler) pick their build from NODE_ENV when they are first loaded; the development
 * build renders several times slower (a 20,000-task list's first frame). This module must be the CLI's
 * first import, so that it runs before either is loaded. NODE_ENV is set only for that moment and put back
 * by `restoreNodeEnv`: setup and checks inherit it otherwise, and `NODE_ENV=production` makes `npm ci` skip
 * the devDependencies a project's tests need.
 */
const SET_HERE = process.env['NODE_ENV'] === undefined;
if (SET_HERE) process.env['NODE_ENV'] = 'production';

/** Called once everything is loaded: NODE_ENV is again what the person's environment said. */
export function restoreNodeEnv(): void {
  if (SET_HERE && process.env['NODE_ENV'] === 'production') delete process.env['NODE_ENV'];
}
