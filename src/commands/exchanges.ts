/**
 * `--record DIR` and `--replay DIR` of a headless run: which model clients the run gets, and the recording's
 * manifest (the tasks it was given), written when a recording starts and compared when a replay starts.
 *
 * Invariants: a recording starts in a folder that does not exist or is empty (a run never mixes into
 * another's files); a replay whose backlog differs from the recorded one — a task added, removed or with
 * another title, description, check or files — refuses to start (exit 2, nothing written), naming the task.
 */
import { mkdir, readdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import {
  EXCHANGE_VERSION,
  MANIFEST_FILE,
  type Manifest,
  readManifest,
  writeRecord,
} from '../adapters/model/exchange-file.js';
import {
  type IdentifyRequest,
  RecordingModelClient,
  ReplayModelClient,
  Sequencer,
} from '../adapters/model/recorded-model.js';
import type { FleetServices } from '../core/fleet/fleet.js';
import { attemptOf, taskOf } from '../core/roles/marker.js';
import { UsageError } from '../domain/errors.js';
import type { Backlog, TaskSpec } from '../domain/types.js';

export interface ExchangesOption {
  mode: 'record' | 'replay';
  /** the folder, as given on the command line */
  dir: string;
}

/** The task and attempt of a request, from the markers the pipeline writes into every prompt. */
const identify: IdentifyRequest = (request) => {
  const task = taskOf(request.prompt);
  return task === null ? null : { task, attempt: attemptOf(request.prompt) };
};

/** What of a task shapes the prompts its agents get. */
function taskText(spec: TaskSpec): string {
  return [spec.title, spec.description, spec.check ?? '', spec.files.join(', ')].join('\n');
}

function manifestOf(backlog: Backlog): Manifest {
  return { version: EXCHANGE_VERSION, tasks: backlog.tasks.map((t) => ({ id: t.id, task: taskText(t) })) };
}

/** The first way `now` differs from the recorded `then`, or null. */
function difference(then: Manifest, now: Manifest): string | null {
  const before = new Map(then.tasks.map((t) => [t.id, t.task]));
  for (const t of now.tasks) {
    const was = before.get(t.id);
    if (was === undefined) return `${t.id} is not in the recording`;
    if (was !== t.task) return `${t.id} changed since the recording (its title, description, check or files)`;
    before.delete(t.id);
  }
  const gone = [...before.keys()][0];
  return gone === undefined ? null : `${gone} was recorded but is not in the backlog`;
}

export interface Exchanges {
  /** the run's model clients, recording or replaying */
  wrap(services: FleetServices): FleetServices;
  /** called once the run holds the lock: a recording makes its folder and writes its manifest */
  start(): Promise<void>;
}

/** Checks the folder of `option` against `backlog`, before anything is written; throws UsageError. */
export async function openExchanges(option: ExchangesOption, backlog: Backlog): Promise<Exchanges> {
  const dir = resolve(option.dir);
  const seq = new Sequencer();
  if (option.mode === 'replay') {
    let recorded: Manifest;
    try {
      recorded = await readManifest(dir);
    } catch (error) {
      throw new UsageError(`--replay ${option.dir}: ${(error as Error).message.replace(/^replay: /, '')}`);
    }
    const differs = difference(recorded, manifestOf(backlog));
    if (differs !== null)
      throw new UsageError(`--replay ${option.dir}: the backlog is not the recorded run's: ${differs}`);
    const client = new ReplayModelClient(dir, identify, seq);
    return { wrap: (s) => ({ ...s, model: client, cliModel: client }), start: async () => {} };
  }
  let entries: string[] = [];
  try {
    entries = await readdir(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOTDIR') throw new UsageError(`--record ${option.dir}: not a folder`);
    if (code !== 'ENOENT') throw error;
  }
  if (entries.length > 0)
    throw new UsageError(`--record ${option.dir}: the folder is not empty; give a new or empty folder`);
  return {
    wrap: (s) => ({
      ...s,
      model: new RecordingModelClient(s.model, dir, identify, seq),
      cliModel: new RecordingModelClient(s.cliModel, dir, identify, seq),
    }),
    start: async () => {
      await mkdir(dir, { recursive: true });
      await writeRecord(dir, MANIFEST_FILE, manifestOf(backlog));
    },
  };
}
