import { RefusedError } from '../../src/domain/errors.js';
import type {
  BlobText,
  ConfigReach,
  ConflictForecast,
  ForkChanges,
  DiffEntry,
  DiffSummary,
  GitPort,
  MergeResult,
  PushResult,
  SnapshotCommit,
  WorktreeInfo,
} from '../../src/ports/git.js';

type Files = Map<string, string>;

interface Commit {
  id: string;
  parents: string[];
  files: Files;
}

/**
 * An in-memory GitPort good enough for the engine: branches point at commits that hold whole file maps,
 * each worktree has a working copy (`files`) an agent writes into, and merge, rebase and dirtiness can be
 * scripted. It knows nothing of real git's edge cases; the real adapter's tests cover those.
 */
export class FakeGit implements GitPort {
  readonly root: string;
  readonly #commits = new Map<string, Commit>();
  readonly #refs = new Map<string, string>();
  readonly #worktrees = new Map<string, { branch: string; files: Files }>();
  #next = 1;
  /** the calls, by method name, in order */
  readonly calls: string[] = [];
  /** branches whose merge into base conflicts (and whose rebase conflicts when listed in `rebaseConflicts`) */
  readonly mergeConflicts = new Set<string>();
  readonly rebaseConflicts = new Set<string>();
  /** branches whose replay git refuses (an untracked file in the way): nothing changes */
  readonly replayRefusals = new Set<string>();
  /** files reported dirty in the main checkout */
  dirty: string[] = [];
  current = 'main';
  /** what the person's git configuration names inside the repository */
  reach: ConfigReach = { includes: [], hooksPath: null };

  constructor(root = '/repo', files: Record<string, string> = { 'README.md': 'hello\n' }) {
    this.root = root;
    this.#refs.set('refs/heads/main', this.#commit([], new Map(Object.entries(files))));
  }

  /** The working copy of a worktree, for a scripted agent to write into. */
  files(worktree: string): Files {
    const w = this.#worktrees.get(worktree);
    if (w === undefined) throw new Error(`no worktree at ${worktree}`);
    return w.files;
  }

  hasWorktree(path: string): boolean {
    return this.#worktrees.has(path);
  }

  /** Move a branch as a person's commit would: a new commit on `branch` with `files` changed. */
  commitOn(branch: string, files: Record<string, string>): string {
    const tip = this.#tip(branch);
    const next = new Map(this.#commits.get(tip)!.files);
    for (const [path, content] of Object.entries(files)) next.set(path, content);
    const id = this.#commit([tip], next);
    this.#refs.set(`refs/heads/${branch}`, id);
    return id;
  }

  /** paths whose content differs between two commits (or branches) */
  changedFiles(from: string, to: string): string[] {
    const a = this.#commits.get(this.#tip(from))!.files;
    const b = this.#commits.get(this.#tip(to))!.files;
    return [...new Set([...a.keys(), ...b.keys()])].filter((p) => a.get(p) !== b.get(p));
  }

  show(branch: string, path: string): string | undefined {
    return this.#commits.get(this.#tip(branch))!.files.get(path);
  }

  async currentBranch(): Promise<string | null> {
    return this.current;
  }
  async branchExists(branch: string): Promise<boolean> {
    return this.#refs.has(`refs/heads/${branch}`);
  }
  async revParse(ref: string): Promise<string | null> {
    return this.#refs.get(ref) ?? this.#refs.get(`refs/heads/${ref}`) ?? (this.#commits.has(ref) ? ref : null);
  }
  async resolveCommits(refs: readonly string[]): Promise<Array<string | null>> {
    return Promise.all(refs.map((ref) => this.revParse(ref)));
  }
  /** a fake commit's tree is the commit itself: no two fake commits record the same tree */
  async treeOf(commit: string): Promise<string | null> {
    const c = await this.revParse(commit);
    return c === null ? null : `tree-of-${c}`;
  }
  async hasCommits(): Promise<boolean> {
    return true;
  }
  async dirtyFiles(): Promise<string[]> {
    return [...this.dirty];
  }
  async ensureExcluded(): Promise<string> {
    return `${this.root}/.git/info/exclude`;
  }

  async addWorktree(path: string, branch: string, base: string): Promise<void> {
    this.calls.push(`addWorktree ${branch}`);
    if (this.#worktrees.has(path)) throw new Error(`fatal: '${path}' already exists`);
    if (!this.#refs.has(`refs/heads/${branch}`)) this.#refs.set(`refs/heads/${branch}`, this.#tip(base));
    this.#worktrees.set(path, { branch, files: new Map(this.#commits.get(this.#tip(branch))!.files) });
  }
  /** a detached checkout of `commit` (a scratch tree): its own ref, so it lists like any worktree */
  addDetached(path: string, commit: string): void {
    const ref = `scratch${path}`;
    this.#refs.set(`refs/heads/${ref}`, this.#tip(commit));
    this.#worktrees.set(path, { branch: ref, files: new Map(this.#commits.get(this.#tip(ref))!.files) });
  }
  removeDetached(path: string): void {
    const w = this.#worktrees.get(path);
    if (w !== undefined) this.#refs.delete(`refs/heads/${w.branch}`);
    this.#worktrees.delete(path);
  }

  async removeWorktree(path: string): Promise<void> {
    this.calls.push(`removeWorktree ${path}`);
    this.#worktrees.delete(path);
  }
  async listWorktrees(): Promise<WorktreeInfo[]> {
    return [...this.#worktrees].map(([path, w]) => ({
      path,
      branch: w.branch,
      head: this.#tip(w.branch),
      prunable: false,
    }));
  }
  async pruneWorktrees(): Promise<void> {}

  async commitSnapshot(worktree: string, _message: string, excludePaths: string[]): Promise<SnapshotCommit> {
    return { commit: this.#commitWorktree(worktree, excludePaths), differs: [], ignored: [] };
  }

  /** what `base...HEAD` changes, a blob id being `<commit>:<path>` (readBlob reads it back) */
  async diffEntries(worktree: string, base: string): Promise<DiffEntry[]> {
    const w = this.#worktrees.get(worktree);
    if (w === undefined) throw new Error(`no worktree at ${worktree}`);
    const [fromId, toId] = [this.#tip(base), this.#tip(w.branch)];
    const from = this.#commits.get(fromId)!.files;
    const to = this.#commits.get(toId)!.files;
    const entries: DiffEntry[] = [];
    for (const path of new Set([...from.keys(), ...to.keys()])) {
      const a = from.get(path);
      const b = to.get(path);
      if (a === b) continue;
      entries.push({
        path,
        status: a === undefined ? 'A' : b === undefined ? 'D' : 'M',
        oldMode: a === undefined ? '000000' : '100644',
        newMode: b === undefined ? '000000' : '100644',
        oldSha: `${fromId}:${path}`,
        newSha: `${toId}:${path}`,
        size: Buffer.byteLength(b ?? a ?? ''),
        binary: false,
        added: b === undefined ? 0 : lines(b).length,
        deleted: a === undefined ? 0 : lines(a).length,
      });
    }
    return entries;
  }

  async configReach(): Promise<ConfigReach> {
    return this.reach;
  }

  async readBlob(object: string, maxBytes: number): Promise<BlobText | null> {
    const at = object.indexOf(':');
    const rev = object.slice(0, at);
    const commit = this.#commits.get(rev) ?? this.#commits.get(this.#refs.get(`refs/heads/${rev}`) ?? rev);
    const text = commit?.files.get(object.slice(at + 1));
    if (text === undefined) return null;
    const size = Buffer.byteLength(text);
    return { size, text: size <= maxBytes ? text : null };
  }

  #commitWorktree(worktree: string, excludePaths: string[]): string | null {
    const w = this.#worktrees.get(worktree);
    if (w === undefined) throw new Error(`no worktree at ${worktree}`);
    const tip = this.#tip(w.branch);
    const files = new Map([...w.files].filter(([p]) => !excludePaths.includes(p)));
    if (sameFiles(files, this.#commits.get(tip)!.files)) return null;
    const id = this.#commit([tip], files);
    this.#refs.set(`refs/heads/${w.branch}`, id);
    this.calls.push(`commit ${w.branch}`);
    return id;
  }

  async diff(worktree: string, base: string): Promise<string> {
    return (await this.diffSummary(worktree, base)).patch;
  }
  async diffNumstat(worktree: string, base: string) {
    return (await this.diffSummary(worktree, base)).numstat;
  }
  async diffStat(worktree: string, base: string): Promise<string> {
    return (await this.diffSummary(worktree, base)).stat;
  }
  async diffSummary(worktree: string, base: string): Promise<DiffSummary> {
    const w = this.#worktrees.get(worktree);
    if (w === undefined) throw new Error(`no worktree at ${worktree}`);
    const from = this.#commits.get(this.#tip(base))!.files;
    const to = this.#commits.get(this.#tip(w.branch))!.files;
    const numstat: DiffSummary['numstat'] = [];
    const patch: string[] = [];
    for (const path of new Set([...from.keys(), ...to.keys()])) {
      const a = from.get(path);
      const b = to.get(path);
      if (a === b) continue;
      const deleted = a === undefined ? 0 : lines(a).length;
      const added = b === undefined ? 0 : lines(b).length;
      numstat.push({ path, added, deleted });
      patch.push(
        `diff --git a/${path} b/${path}\n${lines(a ?? '')
          .map((l) => `-${l}`)
          .join('\n')}\n${lines(b ?? '')
          .map((l) => `+${l}`)
          .join('\n')}`,
      );
    }
    const stat = numstat.map((n) => ` ${n.path} | ${n.added + n.deleted}`).join('\n');
    return {
      numstat,
      stat: numstat.length === 0 ? '' : `${stat}\n ${numstat.length} files changed`,
      patch: patch.join('\n'),
      entries: await this.diffEntries(worktree, base),
    };
  }

  async merge(
    branch: string,
    base: string,
    _message: string,
    options: { ignoreDirty?: readonly string[] } = {},
  ): Promise<MergeResult> {
    this.calls.push(`merge ${branch}`);
    const blocking = this.dirty.filter((f) => !(options.ignoreDirty ?? []).includes(f));
    if (this.current === base && blocking.length > 0)
      return { kind: 'refused', reason: `uncommitted changes in ${blocking.join(', ')}` };
    if (this.mergeConflicts.has(branch)) return { kind: 'conflict', files: ['shared.txt'] };
    const ours = this.#tip(base);
    const theirs = this.#tip(branch);
    const files = new Map(this.#commits.get(ours)!.files);
    for (const [p, c] of this.#commits.get(theirs)!.files) files.set(p, c);
    const id = this.#commit([ours, theirs], files);
    this.#refs.set(`refs/heads/${base}`, id);
    return { kind: 'merged', commit: id };
  }
  async canMerge(branch: string): Promise<boolean> {
    return !this.mergeConflicts.has(branch);
  }
  /**
   * The fake's conflicts are declared ({@link FakeGit.mergeConflicts}), not computed from paths: each commit
   * is reported as its own fork, so the forecast asks every pair as it would without the shortcut.
   */
  async changesSinceFork(_base: string, commit: string): Promise<ForkChanges> {
    return { fork: `fork-of-${commit}`, paths: [] };
  }
  /** a branch in `mergeConflicts` conflicts with base and with every other such branch, in shared.txt */
  async forecastConflicts(left: string, right: string): Promise<ConflictForecast> {
    const conflicted = [left, right].filter((ref) => this.mergeConflicts.has(ref));
    const withBase = conflicted.length === 1 && [left, right].some((ref) => !ref.startsWith('loop/'));
    return conflicted.length === 2 || withBase ? { files: ['shared.txt'], hunks: {} } : { files: [], hunks: {} };
  }
  async rebase(worktree: string, base: string): Promise<boolean> {
    const w = this.#worktrees.get(worktree);
    if (w === undefined) throw new Error(`no worktree at ${worktree}`);
    this.calls.push(`rebase ${w.branch}`);
    if (this.rebaseConflicts.has(w.branch)) return false;
    const files = new Map(this.#commits.get(this.#tip(base))!.files);
    for (const [p, c] of this.#commits.get(this.#tip(w.branch))!.files) files.set(p, c);
    const id = this.#commit([this.#tip(base)], files);
    this.#refs.set(`refs/heads/${w.branch}`, id);
    this.mergeConflicts.delete(w.branch);
    w.files = new Map(files);
    return true;
  }
  /** the branch moves to base; its files overlay base's, and shared.txt (when both have it) gets markers */
  async replayOnto(worktree: string, onto: string, keep: string): Promise<ConflictForecast> {
    const w = this.#worktrees.get(worktree);
    if (w === undefined) throw new Error(`no worktree at ${worktree}`);
    this.calls.push(`replay ${w.branch}`);
    if (this.replayRefusals.has(w.branch))
      throw new RefusedError(
        `cannot replay ${w.branch} onto ${onto}: untracked working tree files would be overwritten`,
      );
    const tip = this.#tip(w.branch);
    this.#refs.set(keep, tip);
    const baseFiles = this.#commits.get(this.#tip(onto))!.files;
    const files = new Map(baseFiles);
    const hunks: Record<string, string[]> = {};
    for (const [p, c] of this.#commits.get(tip)!.files) {
      const theirs = baseFiles.get(p);
      if (p === 'shared.txt' && theirs !== undefined && theirs !== c) {
        hunks[p] = [`<<<<<<< ${onto}\n${theirs}=======\n${c}>>>>>>> ${w.branch}`];
        files.set(p, `${hunks[p]![0]}\n`);
      } else files.set(p, c);
    }
    this.#refs.set(`refs/heads/${w.branch}`, this.#tip(onto));
    this.mergeConflicts.delete(w.branch);
    this.rebaseConflicts.delete(w.branch);
    w.files = files;
    return { files: Object.keys(hunks), hunks };
  }
  async resetHard(worktree: string, commit: string): Promise<void> {
    const w = this.#worktrees.get(worktree)!;
    const target = commit.endsWith('~1') ? this.#commits.get(commit.slice(0, -2))!.parents[0]! : commit;
    this.#refs.set(`refs/heads/${w.branch}`, target);
    w.files = new Map(this.#commits.get(target)!.files);
  }
  async updateRef(ref: string, commit: string): Promise<void> {
    this.#refs.set(ref, commit);
  }
  async deleteRef(ref: string): Promise<void> {
    this.#refs.delete(ref);
  }
  async deleteBranch(branch: string): Promise<void> {
    this.calls.push(`deleteBranch ${branch}`);
    this.#refs.delete(`refs/heads/${branch}`);
  }
  async isMerged(branch: string, base: string): Promise<boolean> {
    const target = this.#tip(branch);
    const seen = new Set<string>();
    const stack = [this.#tip(base)];
    while (stack.length > 0) {
      const id = stack.pop()!;
      if (id === target) return true;
      if (seen.has(id)) continue;
      seen.add(id);
      stack.push(...this.#commits.get(id)!.parents);
    }
    return false;
  }
  async listBranches(prefix: string): Promise<string[]> {
    return [...this.#refs.keys()]
      .filter((r) => r.startsWith(`refs/heads/${prefix}`))
      .map((r) => r.slice('refs/heads/'.length));
  }

  /** remotes by name (or URL): their URL and refs (full name → commit of this fake's store) */
  readonly remotes = new Map<string, { url: string; refs: Map<string, string> }>();

  async remoteUrl(name: string): Promise<string | null> {
    this.calls.push('remoteUrl');
    return this.remotes.get(name)?.url ?? null;
  }

  #remote(remote: string): Map<string, string> {
    const found = this.remotes.get(remote) ?? [...this.remotes.values()].find((r) => r.url === remote);
    if (found === undefined) throw new Error(`fatal: '${remote}' does not appear to be a git repository`);
    return found.refs;
  }

  async push(remote: string, source: string, target: string, expect: string | null): Promise<PushResult> {
    this.calls.push('push');
    const refs = this.#remote(remote);
    const commit = this.#tip(source);
    if ((refs.get(target) ?? null) !== expect) return { kind: 'rejected', reason: '[rejected] (stale info)' };
    refs.set(target, commit);
    return { kind: 'pushed', commit };
  }

  async fetch(remote: string, refspecs: readonly string[]): Promise<void> {
    this.calls.push('fetch');
    const refs = this.#remote(remote);
    for (const spec of refspecs) {
      const [from, to] = spec.replace(/^\+/, '').split(':');
      const commit = from === undefined ? undefined : refs.get(from);
      if (commit === undefined) throw new Error(`fatal: couldn't find remote ref ${from}`);
      if (to !== undefined && to !== '') this.#refs.set(to, commit);
    }
  }

  async lsRemote(remote: string, refs: readonly string[]): Promise<Map<string, string>> {
    this.calls.push('lsRemote');
    const all = this.#remote(remote);
    return new Map([...all].filter(([name]) => refs.length === 0 || refs.includes(name)));
  }

  #tip(branch: string): string {
    const id =
      this.#refs.get(`refs/heads/${branch}`) ??
      this.#refs.get(branch) ??
      (this.#commits.has(branch) ? branch : undefined);
    if (id === undefined) throw new Error(`fatal: unknown revision ${branch}`);
    return id;
  }

  #commit(parents: string[], files: Files): string {
    const id = (this.#next++).toString(16).padStart(40, '0');
    this.#commits.set(id, { id, parents, files });
    return id;
  }
}

function lines(text: string): string[] {
  return text === '' ? [] : text.replace(/\n$/, '').split('\n');
}

function sameFiles(a: Files, b: Files): boolean {
  return a.size === b.size && [...a].every(([p, c]) => b.get(p) === c);
}
