/**
 * A JSON-lines file that never grows past a cap: the first records up to half the cap are written as they
 * come, the last records up to the other half are held in memory and written when the file is ended,
 * and between them one `{"type":"cut",…}` record says how much was left out (`… 512 MB cut …`).
 *
 * Invariants: the file holds at most `maxBytes` plus the cut record; memory holds at most half the cap
 * (plus one record); records keep their order; a single record is cut field by field (`capRecord`) so it
 * is never larger than a quarter of the cap and stays valid JSON.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { formatBytes } from '../../core/text/format-units.js';

/** `text` kept to its first and last `keep / 2` characters, the middle replaced by `… N cut …`. */
export function headAndTail(text: string, keep: number): string {
  if (text.length <= keep) return text;
  const half = Math.floor(keep / 2);
  const cut = Buffer.byteLength(text.slice(half, text.length - half));
  return `${text.slice(0, half)}\n… ${formatBytes(cut)} cut …\n${text.slice(text.length - half)}`;
}

/** A record whose string fields are each at most `maxChars` (head and tail kept). */
export function capRecord(record: Record<string, unknown>, maxChars: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record))
    out[key] = typeof value === 'string' ? headAndTail(value, maxChars) : value;
  return out;
}

export class CappedJsonl {
  readonly #stream: WriteStream;
  readonly #half: number;
  #written = 0;
  readonly #tail: string[] = [];
  #tailBytes = 0;
  #cutBytes = 0;
  #cutRecords = 0;

  constructor(file: string, maxBytes: number, onError: (error: Error) => void) {
    this.#half = Math.max(1, Math.floor(maxBytes / 2));
    this.#stream = createWriteStream(file, { flags: 'a' });
    this.#stream.on('error', onError);
  }

  /** the largest a single string field may be for a record to fit */
  get maxFieldChars(): number {
    return Math.max(256, Math.floor(this.#half / 4));
  }

  write(record: Record<string, unknown>): void {
    const line = `${JSON.stringify(capRecord(record, this.maxFieldChars))}\n`;
    const bytes = Buffer.byteLength(line);
    if (this.#cutRecords === 0 && this.#tail.length === 0 && this.#written + bytes <= this.#half) {
      this.#written += bytes;
      this.#stream.write(line);
      return;
    }
    this.#tail.push(line);
    this.#tailBytes += bytes;
    while (this.#tailBytes > this.#half && this.#tail.length > 0) {
      const dropped = this.#tail.shift()!;
      this.#tailBytes -= Buffer.byteLength(dropped);
      this.#cutBytes += Buffer.byteLength(dropped);
      this.#cutRecords += 1;
    }
  }

  /** Writes the cut record and the held tail, and closes the file. */
  end(): Promise<void> {
    if (this.#cutRecords > 0) {
      const note = `… ${formatBytes(this.#cutBytes)} cut …`;
      this.#stream.write(
        `${JSON.stringify({ type: 'cut', bytes: this.#cutBytes, records: this.#cutRecords, note })}\n`,
      );
    }
    for (const line of this.#tail.splice(0)) this.#stream.write(line);
    return new Promise<void>((done) => this.#stream.end(done));
  }
}
