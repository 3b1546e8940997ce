import { Lessons } from '../../src/core/roles/lessons.js';
import type { LessonFile } from '../../src/ports/lessons.js';

/** The lessons file in memory: `text` is the whole file. */
export class FakeLessonFile implements LessonFile {
  text = '';

  async tail(maxBytes: number): Promise<string> {
    if (this.text.length <= maxBytes) return this.text;
    const cut = this.text.slice(-maxBytes);
    const newline = cut.indexOf('\n');
    return newline === -1 ? '' : cut.slice(newline + 1);
  }

  async append(text: string): Promise<void> {
    this.text += text;
  }
}

/** Lessons on an in-memory file, on unless `enabled` is false. */
export function fakeLessons(file: LessonFile = new FakeLessonFile(), enabled = true): Lessons {
  return new Lessons(file, { enabled, now: () => new Date('2026-01-01T00:00:00Z') });
}
