import { join } from 'node:path';
import { LowdbStateStore } from '../../src/adapters/store/lowdb-state.js';

/** The fleet's state as `status` reads it: state.json with its journal replayed (null when there is none). */
export async function readState(root: string): Promise<any> {
  return new LowdbStateStore(join(root, '.loop-worktrees', 'state.json')).load();
}
