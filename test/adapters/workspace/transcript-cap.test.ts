import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FsWorkspace } from '../../../src/adapters/workspace/fs-workspace.js';
import { ExecaRunner } from '../../../src/adapters/sandbox/execa-runner.js';

let temps: string[] = [];
afterEach(async () => {
  for (const t of temps) await rm(t, { recursive: true, force: true });
  temps = [];
});

describe('transcripts', () => {
  it('are capped: the head and the tail are kept and a record says what was cut', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'lf-transcript-'));
    temps.push(dir);
    const ws = new FsWorkspace(dir, { maxTranscriptBytes: 1_000_000 });
    const chunk = 'x'.repeat(64 * 1024);
    ws.transcript('T-1', 1, { type: 'attempt-start', attempt: 1 });
    // 50 MB of agent output, then one single 20 MB line.
    for (let i = 0; i < 800; i++) ws.transcript('T-1', 1, { type: 'output', phase: 'implement', chunk });
    ws.transcript('T-1', 1, { type: 'text', role: 'implementer', text: `${'y'.repeat(20_000_000)}END` });
    ws.transcript('T-1', 1, { type: 'attempt-end', outcome: 'verified' });
    await ws.flush();

    const file = path.join(dir, 'logs', 'T-1', '1.jsonl');
    expect((await stat(file)).size).toBeLessThan(1_100_000);
    const records = (await readFile(file, 'utf8'))
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records[0]).toEqual({ type: 'attempt-start', attempt: 1 });
    expect(records.at(-1)).toEqual({ type: 'attempt-end', outcome: 'verified' });
    const cut = records.find((r) => r.type === 'cut')!;
    expect(cut.note).toMatch(/^… \d+ MB cut …$/);
    expect(cut.bytes as number).toBeGreaterThan(45_000_000);
    const text = records.find((r) => r.type === 'text')!.text as string;
    expect(text).toMatch(/^y+\n… 20 MB cut …\ny+END$/);
  });

  it('kept command output holds its head and its tail, and says what was cut between them', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'lf-output-'));
    temps.push(dir);
    const r = await new ExecaRunner().run("echo START; head -c 2000000 /dev/zero | tr '\\0' a; echo; echo END", {
      cwd: dir,
      env: { PATH: '/usr/bin:/bin' },
      timeoutMs: 20_000,
      maxOutputBytes: 1000,
      keepHeadBytes: 200,
    });
    expect(r.truncated).toBe(true);
    expect(r.output.startsWith('START\naaa')).toBe(true);
    expect(r.output).toMatch(/\n… 2 MB cut …\na+\nEND\n$/);
    expect(r.output.length).toBeLessThan(1100);
  });
});
