import { describe, expect, it } from 'vitest';
import { newlyIgnored } from '../../../src/core/guard/ignored.js';

describe('files a .gitignore change hides from the commit', () => {
  it('are refused; what base already ignored, or a change that ignores nothing present, is not', () => {
    const ignored = ['node_modules/', 'dist/', 'src/impl.js', 'pkg/gen/out.js'];
    expect(
      newlyIgnored(ignored, [
        { path: '.gitignore', base: 'node_modules/\n', next: 'node_modules/\ndist/\nsrc/impl.js\n' },
      ]),
    ).toEqual([
      'guard: dist/ is left out of the commit only by the change to .gitignore, yet the check sees it',
      'guard: src/impl.js is left out of the commit only by the change to .gitignore, yet the check sees it',
    ]);
    expect(newlyIgnored(ignored, [{ path: 'pkg/.gitignore', base: null, next: 'gen/\n' }])).toEqual([
      'guard: pkg/gen/out.js is left out of the commit only by the change to pkg/.gitignore, yet the check sees it',
    ]);
    expect(
      newlyIgnored(ignored, [
        { path: '.gitignore', base: 'node_modules/\ndist/\n', next: 'node_modules/\ndist/\n*.log\n' },
      ]),
    ).toEqual([]);
    expect(newlyIgnored(ignored, [])).toEqual([]);
  });
});
