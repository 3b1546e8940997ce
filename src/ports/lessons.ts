/** The lessons file, `.loop-worktrees/lessons.md` (see {@link parseLessons} and {@link renderLessons}). */
export interface LessonFile {
  /** the last `maxBytes` of the file, starting at a whole line; '' when there is no file */
  tail(maxBytes: number): Promise<string>;
  /** appends `text`, creating the file (and its folder) when missing */
  append(text: string): Promise<void>;
}
