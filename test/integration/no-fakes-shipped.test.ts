import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SRC } from '../helpers/paths.js';

// src/ is what `npm run build` compiles into dist/ and the package ships: test stand-ins live in test/.
describe('the shipped sources', () => {
  it('hold no test fake and import nothing from test/', async () => {
    const files = (await readdir(SRC, { recursive: true })).filter((f) => /\.tsx?$/.test(f));
    expect(files.filter((f) => /(^|\/)fake[-.]/.test(f))).toEqual([]);
    const importsTest: string[] = [];
    for (const f of files) if (/from '(\.\.\/)+test\//.test(await readFile(join(SRC, f), 'utf8'))) importsTest.push(f);
    expect(importsTest).toEqual([]);
  });
});
