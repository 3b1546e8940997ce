import { appendFile, mkdir, open } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { LessonFile } from '../../ports/lessons.js';
import { visible } from '../../domain/sanitize.js';

/** `.loop-worktrees/lessons.md` on disk: reads only the file's end, appends with O_APPEND. */
export class FsLessonFile implements LessonFile {
  readonly #path: string;

  constructor(path: string) {
    this.#path = path;
  }

  async tail(maxBytes: number): Promise<string> {
    let handle;
    try {
      handle = await open(this.#path, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return '';
      throw error;
    }
    try {
      const { size } = await handle.stat();
      // One byte more than asked, to see whether the cut falls at the start of a line.
      const start = Math.max(0, size - maxBytes - 1);
      const buffer = Buffer.alloc(size - start);
      await handle.read(buffer, 0, buffer.length, start);
      const text = buffer.toString('utf8');
      // A line cut in the middle is not a lesson.
      return start === 0 ? text : text.slice(text.indexOf('\n') + 1);
    } finally {
      await handle.close();
    }
  }

  /**
   * Lessons quote agents, and the file is read in a terminal and an editor: what is appended passes the one
   * sanitiser (no escape sequence, control or bidi override reaches the file).
   */
  async append(text: string): Promise<void> {
    await mkdir(dirname(this.#path), { recursive: true });
    await appendFile(this.#path, visible(text));
  }
}
