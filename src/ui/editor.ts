import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface RunEditorOptions {
  /** where `VISUAL` / `EDITOR` are read; default `process.env` */
  env?: NodeJS.ProcessEnv;
  /** the terminal's input; default `process.stdin` */
  stdin?: NodeJS.ReadStream;
}

/** `$VISUAL`, else `$EDITOR`, else `vi` — the order git and most Unix tools use. */
export function editorCommand(env: NodeJS.ProcessEnv = process.env): string {
  const pick = (v: string | undefined): string | undefined => (v !== undefined && v.trim() !== '' ? v : undefined);
  return pick(env['VISUAL']) ?? pick(env['EDITOR']) ?? 'vi';
}

/**
 * Opens `path` in the person's editor and resolves when the editor exits successfully (rejects on a
 * non-zero exit or when the editor cannot start).
 *
 * The terminal is handed over for the duration: raw mode is turned off and our reading of stdin paused, so
 * every key goes to the editor; both are restored afterwards, as they were. The editor command may carry
 * arguments (`code --wait`), as with git: on POSIX it runs as `sh -c '<editor> "$@"' <editor> <path>`.
 */
export async function runEditor(path: string, options: RunEditorOptions = {}): Promise<void> {
  const env = options.env ?? process.env;
  const stdin = options.stdin ?? process.stdin;
  const command = editorCommand(env);
  const wasRaw = stdin.isTTY === true && stdin.isRaw;
  const wasPaused = stdin.isPaused();
  if (wasRaw) stdin.setRawMode(false);
  if (!wasPaused) stdin.pause();
  try {
    await new Promise<void>((resolve, reject) => {
      const child =
        process.platform === 'win32'
          ? spawn(`${command} "${path}"`, { stdio: 'inherit', env, shell: true })
          : spawn('sh', ['-c', `${command} "$@"`, command, path], { stdio: 'inherit', env });
      child.once('error', (error) => reject(new Error(`could not start ${command}: ${error.message}`)));
      child.once('exit', (code, signal) => {
        if (code === 0) resolve();
        else reject(new Error(`${command} exited with ${signal ?? `code ${code ?? '?'}`}`));
      });
    });
  } finally {
    if (wasRaw) stdin.setRawMode(true);
    if (!wasPaused) stdin.resume();
  }
}

/**
 * Opens `text` in the person's editor as a file named `name` in a fresh temporary folder and resolves with
 * the text as saved (rejects like runEditor). The folder is removed afterwards, whatever happened.
 */
export async function editText(text: string, name: string, options: RunEditorOptions = {}): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'loopfleet-'));
  const path = join(dir, name);
  try {
    await writeFile(path, text.endsWith('\n') ? text : `${text}\n`);
    await runEditor(path, options);
    return await readFile(path, 'utf8');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
