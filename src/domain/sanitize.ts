/**
 * The one sanitiser for text loopfleet did not write itself (agent output, check output, plans, reasons,
 * lessons, titles from TODOs and issues) on its way to a terminal, a Markdown file or a notify payload.
 *
 * Invariants:
 * - the result holds no byte a terminal interprets: no ESC, no C0 control but tab and newline (and those
 *   only in multi-line text), no DEL, no C1 control (U+0080–U+009F), no bidi override, embedding, isolate
 *   or mark (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C);
 * - control sequences that only colour text or move the cursor (CSI, two-character escapes) are dropped;
 *   strings that carry a payload (OSC: title, clipboard, hyperlink; DCS, SOS, PM, APC) are shown visibly
 *   with their terminator and shortened (`␛]52;c;SGVsbG8…␇`), so a person sees that something was
 *   attempted and where it pointed (`␛]8;;https://…␛\link`); other controls are
 *   shown as Control Pictures (`␇`, `␡`) or as `⟨U+202E⟩`;
 * - `\r\n` is a newline; a lone `\r` starts a new line in multi-line text;
 * - `oneLine` never returns a line break: each run of line breaks becomes ` ⏎ `;
 * - work is linear in the length of the text, however hostile (one forward scan, no backtracking regex).
 */

export interface VisibleOptions {
  /** keep newlines and tabs (default); false: the text is a one-line field (see oneLine) */
  multiline?: boolean;
}

/** How much of an OSC/DCS/SOS/PM/APC payload is shown before `…`. */
export const SHOWN_PAYLOAD = 40;

const ESC = 0x1b;
const BEL = 0x07;
const CAN = 0x18;
const SUB = 0x1a;
const ST8 = 0x9c;
const CSI8 = 0x9b;

/** Everything the scan stops at; all else is copied as it is. */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;

// As UNSAFE; a second object, so that replace() leaves UNSAFE's lastIndex alone
const UNSAFE_ANY = new RegExp(UNSAFE.source, 'g');

/** The introducer of a string sequence, by its 7-bit final byte and by its 8-bit C1 code. */
const STRING_7 = new Set([0x5d /* ] OSC */, 0x50 /* P DCS */, 0x58 /* X SOS */, 0x5e /* ^ PM */, 0x5f /* _ APC */]);
const STRING_8: ReadonlyMap<number, string> = new Map([
  [0x9d, ']'],
  [0x90, 'P'],
  [0x98, 'X'],
  [0x9e, '^'],
  [0x9f, '_'],
]);

function isLineBreak(c: number): boolean {
  return c === 0x0a || c === 0x0d || c === 0x2028 || c === 0x2029;
}

/** How a single unsafe character is shown when it is not part of a sequence. */
function picture(c: number): string {
  if (c < 0x20) return String.fromCharCode(0x2400 + c); // ␀ … ␟ (␛ for ESC)
  if (c === 0x7f) return '\u2421'; // ␡
  return `⟨U+${c.toString(16).toUpperCase().padStart(4, '0')}⟩`;
}

/** A payload shown inside a visible string sequence: shortened, and with every unsafe character pictured. */
function shownPayload(text: string, from: number, to: number): string {
  const cut = to - from > SHOWN_PAYLOAD;
  const part = text.slice(from, cut ? from + SHOWN_PAYLOAD : to);
  return part.replace(UNSAFE_ANY, (ch) => picture(ch.charCodeAt(0))) + (cut ? '…' : '');
}

/** The end of a CSI's parameters, intermediates and final byte starting at `i`; -1 when it is not complete. */
function csiEnd(text: string, i: number): number {
  let j = i;
  while (j < text.length && text.charCodeAt(j) >= 0x30 && text.charCodeAt(j) <= 0x3f) j++;
  while (j < text.length && text.charCodeAt(j) >= 0x20 && text.charCodeAt(j) <= 0x2f) j++;
  const f = text.charCodeAt(j);
  return f >= 0x40 && f <= 0x7e ? j + 1 : -1;
}

/**
 * The end of a string sequence's payload starting at `i`: the index of its terminator (BEL, ST as `ESC \`
 * or 0x9C, CAN, SUB), or of what interrupts it (another ESC, a line break), or the end of the text.
 */
function payloadEnd(text: string, i: number): number {
  let j = i;
  for (; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === BEL || c === ESC || c === ST8 || c === CAN || c === SUB || isLineBreak(c)) return j;
  }
  return j;
}

/** The terminator at `j` that belongs to the string sequence, as it is shown, and its length; length 0 for none. */
function terminator(text: string, j: number): { shown: string; length: number } {
  const c = text.charCodeAt(j);
  if (c === BEL || c === CAN || c === SUB) return { shown: picture(c), length: 1 };
  if (c === ST8) return { shown: '␛\\', length: 1 };
  if (c === ESC && text.charCodeAt(j + 1) === 0x5c) return { shown: '␛\\', length: 2 };
  return { shown: '', length: 0 };
}

/**
 * `text` made safe to show: see the invariants above. Multi-line (the default) keeps tabs and newlines; a
 * one-line field gets `oneLine`'s treatment.
 */
export function visible(text: string, options: VisibleOptions = {}): string {
  const multiline = options.multiline ?? true;
  const out: string[] = [];
  /** oneLine: a line break was seen and not yet written (written as ` ⏎ ` before the next visible text) */
  let pendingBreak = false;
  const emit = (s: string) => {
    if (s === '') return;
    if (pendingBreak) {
      if (out.length > 0) out.push(' ⏎ ');
      pendingBreak = false;
    }
    out.push(s);
  };
  const lineBreak = () => {
    if (multiline) {
      out.push('\n');
      return;
    }
    // Spaces before the break go with it: `a  \n  b` is `a ⏎ b`.
    while (out.length > 0) {
      const last = out.pop()!;
      const trimmed = last.trimEnd();
      if (trimmed !== '') {
        out.push(trimmed);
        break;
      }
    }
    pendingBreak = true;
  };
  const space = (s: string) => {
    // In a one-line field, whitespace right after a break is part of the break.
    if (!pendingBreak) emit(s);
  };

  let i = 0;
  while (i < text.length) {
    UNSAFE.lastIndex = i;
    const m = UNSAFE.exec(text);
    const at = m === null ? text.length : m.index;
    if (at > i) {
      const run = text.slice(i, at);
      if (pendingBreak) {
        const rest = run.trimStart();
        if (rest !== '') emit(rest);
      } else emit(run);
    }
    if (m === null) break;
    i = at;
    const c = text.charCodeAt(i);
    if (c === 0x0d && text.charCodeAt(i + 1) === 0x0a) {
      lineBreak();
      i += 2;
    } else if (isLineBreak(c)) {
      lineBreak();
      i += 1;
    } else if (c === 0x09) {
      if (multiline) emit('\t');
      else space(' ');
      i += 1;
    } else if (c === ESC || c === CSI8 || STRING_8.has(c)) {
      i = sequence(text, i, emit);
    } else {
      emit(picture(c));
      i += 1;
    }
  }
  return out.join('');
}

/** Handles the sequence starting at `i` (ESC, or an 8-bit CSI or string introducer); returns where the scan goes on. */
function sequence(text: string, i: number, emit: (s: string) => void): number {
  const c = text.charCodeAt(i);
  if (c === CSI8) {
    const end = csiEnd(text, i + 1);
    if (end !== -1) return end; // dropped: colour or cursor movement
    emit('␛[');
    return i + 1;
  }
  const intro = STRING_8.get(c);
  if (intro !== undefined) return stringSequence(text, i + 1, intro, emit);
  // 7-bit: ESC and what follows it.
  const d = text.charCodeAt(i + 1);
  if (d === 0x5b) {
    const end = csiEnd(text, i + 2);
    if (end !== -1) return end;
    emit('␛[');
    return i + 2;
  }
  if (STRING_7.has(d)) return stringSequence(text, i + 2, String.fromCharCode(d), emit);
  // nF (intermediates then a final byte: charset selection, DECALN) and Fp/Fe/Fs (RIS, DECSC, lone ST): dropped.
  let j = i + 1;
  while (j < text.length && text.charCodeAt(j) >= 0x20 && text.charCodeAt(j) <= 0x2f) j++;
  const f = text.charCodeAt(j);
  if (f >= 0x30 && f <= 0x7e) return j + 1;
  emit('␛');
  return i + 1;
}

/** A string sequence whose payload starts at `payloadStart`: shown, shortened, its terminator consumed. */
function stringSequence(text: string, payloadStart: number, intro: string, emit: (s: string) => void): number {
  const end = payloadEnd(text, payloadStart);
  const t = terminator(text, end);
  emit(`␛${intro}${shownPayload(text, payloadStart, end)}${t.shown}`);
  return end + t.length;
}

/** A one-line field (a title, a reason, a status line): `visible`, with each run of line breaks as ` ⏎ ` and tabs as spaces. */
export function oneLine(text: string): string {
  return visible(text, { multiline: false });
}

/** Characters JSON.stringify leaves raw that a terminal printing the JSON would still act on. */
const JSON_RAW = /[\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;

/**
 * JSON.stringify's text with DEL, C1 controls, bidi controls and line/paragraph separators written as
 * `\u…` escapes (it escapes C0 itself). Safe as a post-pass: these characters occur only inside strings,
 * and every escape JSON.stringify writes is ASCII, so none of them is part of one.
 */
export function escapeJson(json: string): string {
  return json.replace(JSON_RAW, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** JSON for a person or a tool to read: JSON.stringify, then escapeJson. The data is kept as it is. */
export function jsonText(value: unknown, space?: number): string {
  return escapeJson(JSON.stringify(value, null, space));
}
