import { constants } from 'node:fs';
import { open, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { REPORTS_DIR } from '../domain/layout.js';
import type { Repo } from './repo.js';

/**
 * The newest morning report under `.loop-worktrees/reports/`, or null when no run wrote one. Reports are
 * named by the time their run ended (ISO, `:` and `.` as `-`), so the newest sorts last. Read with
 * `O_NOFOLLOW`: never through a link planted in a report's place. `serve` and `mcp` both read it here.
 */
export async function newestReport(repo: Repo): Promise<{ dir: string; name: string; markdown: string } | null> {
  const dir = join(repo.workDir, REPORTS_DIR);
  const names = await readdir(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [] as string[];
    throw error;
  });
  const name = names
    .filter((n) => n.endsWith('.md'))
    .sort()
    .at(-1);
  if (name === undefined) return null;
  const handle = await open(join(dir, name), constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    return { dir, name, markdown: await handle.readFile('utf8') };
  } finally {
    await handle.close();
  }
}
