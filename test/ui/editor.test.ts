import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, test } from 'vitest';
import { editorCommand, runEditor } from '../../src/ui/editor.js';

const isWindows = process.platform === 'win32';

function fakeStdin(): NodeJS.ReadStream & { rawCalls: boolean[] } {
  const stream = new PassThrough() as unknown as NodeJS.ReadStream & { rawCalls: boolean[] };
  stream.rawCalls = [];
  Object.assign(stream, {
    isTTY: true,
    isRaw: true,
    setRawMode(mode: boolean) {
      stream.rawCalls.push(mode);
      (stream as { isRaw: boolean }).isRaw = mode;
      return stream;
    },
  });
  stream.resume();
  return stream;
}

describe('runEditor', () => {
  test('$VISUAL wins over $EDITOR, then vi', () => {
    expect(editorCommand({ VISUAL: 'nano', EDITOR: 'emacs' })).toBe('nano');
    expect(editorCommand({ EDITOR: 'emacs' })).toBe('emacs');
    expect(editorCommand({ EDITOR: '  ' })).toBe('vi');
    expect(editorCommand({})).toBe('vi');
  });

  test.skipIf(isWindows)('runs the editor with arguments on the file, leaving and restoring raw mode', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loopfleet-editor-'));
    const file = join(dir, 'BACKLOG with space.md');
    writeFileSync(file, '# Backlog\n');
    const stdin = fakeStdin();
    await runEditor(file, {
      env: { ...process.env, VISUAL: '', EDITOR: 'sh -c \'echo "- [ ] T-1 added" >> "$0"\'' },
      stdin,
    });
    expect(readFileSync(file, 'utf8')).toBe('# Backlog\n- [ ] T-1 added\n');
    expect(stdin.rawCalls).toEqual([false, true]);
    expect(stdin.isPaused()).toBe(false);
  });

  test.skipIf(isWindows)('rejects when the editor fails, still restoring raw mode', async () => {
    const stdin = fakeStdin();
    await expect(runEditor('/nonexistent', { env: { ...process.env, VISUAL: 'false' }, stdin })).rejects.toThrow(
      'false exited with code 1',
    );
    expect(stdin.rawCalls).toEqual([false, true]);
  });
});
