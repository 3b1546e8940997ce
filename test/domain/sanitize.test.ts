import { describe, expect, it } from 'vitest';
import { escapeJson, jsonText, oneLine, SHOWN_PAYLOAD, visible } from '../../src/domain/sanitize.js';

/** Any byte a terminal acts on: C0 but tab and newline, DEL, C1, bidi controls. */
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

describe('visible: escape sequences', () => {
  it('drops CSI sequences (colours, cursor, clear screen), 7-bit and 8-bit', () => {
    expect(visible('\u001b[31mred\u001b[0m \u001b[2J\u001b[H\u001b[?1049h ok')).toBe('red  ok');
    expect(visible('a\u009b31mb\u009b2Jc')).toBe('abc');
  });

  it('drops two-character escapes (RIS, DECSC, charset) and a lone ST', () => {
    expect(visible('a\u001bcb\u001b7c\u001b(Bd\u001b\\e')).toBe('abcde');
  });

  it('shows an OSC visibly, whether BEL or ST ends it', () => {
    expect(visible('x\u001b]0;pwned\u0007y')).toBe('x␛]0;pwned␇y');
    expect(visible('x\u001b]2;pwned\u001b\\y')).toBe('x␛]2;pwned␛\\y');
    expect(visible('x\u009d0;pwned\u009cy')).toBe('x␛]0;pwned␛\\y');
    expect(visible('\u001b]8;;https://evil.example/\u001b\\click\u001b]8;;\u001b\\')).toBe(
      '␛]8;;https://evil.example/␛\\click␛]8;;␛\\',
    );
  });

  it('shortens a long payload (an OSC 52 clipboard write)', () => {
    const payload = `52;c;${'QUJD'.repeat(1000)}`;
    const shown = visible(`\u001b]${payload}\u0007after`);
    expect(shown).toBe(`␛]${payload.slice(0, SHOWN_PAYLOAD)}…␇after`);
  });

  it('an unterminated OSC ends at the line, the next line is kept', () => {
    expect(visible('a\u001b]0;title')).toBe('a␛]0;title');
    expect(visible('a\u001b]0;title\nnext line')).toBe('a␛]0;title\nnext line');
    expect(visible('a\u009d0;t\u001b[31mred')).toBe('a␛]0;tred');
  });

  it('shows DCS, SOS, PM and APC strings the same way', () => {
    expect(visible('\u001bP1$qm\u001b\\|\u001bXsos\u0007|\u001b^pm\u0007|\u001b_apc\u0007|\u0090dcs\u009c')).toBe(
      '␛P1$qm␛\\|␛Xsos␇|␛^pm␇|␛_apc␇|␛Pdcs␛\\',
    );
  });

  it('pictures the controls inside a shown payload', () => {
    expect(visible('\u001b]0;a\u0001\u202eb\u0007')).toBe('␛]0;a␁⟨U+202E⟩b␇');
  });

  it('an incomplete CSI or a lone ESC is shown', () => {
    expect(visible('a\u001b[12')).toBe('a␛[12');
    expect(visible('a\u001b')).toBe('a␛');
    expect(visible('a\u009b')).toBe('a␛[');
    expect(visible('a\u001b\u0001')).toBe('a␛␁');
  });
});

describe('visible: controls and bidi', () => {
  it('pictures C0 controls and DEL, keeps tab and newline', () => {
    expect(visible('a\u0000b\u0007c\u0008d\u007fe\tf\ng')).toBe('a␀b␇c␈d␡e\tf\ng');
  });

  it('\\r\\n is a newline, a lone \\r starts a new line', () => {
    expect(visible('a\r\nb\rc')).toBe('a\nb\nc');
  });

  it('shows C1 controls and bidi overrides, isolates and marks as code points', () => {
    expect(visible('a\u0085b\u0084c')).toBe('a⟨U+0085⟩b⟨U+0084⟩c');
    const bidi = '\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c';
    const shown = visible(`x${bidi}y`);
    expect(shown).not.toMatch(UNSAFE);
    expect(shown).toBe(
      `x${[...bidi].map((c) => `⟨U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}⟩`).join('')}y`,
    );
  });

  it('leaves ordinary text alone, non-ASCII included', () => {
    const text = 'Grüße, 日本語, emoji 🚀, ✔ ✗ ⚠ — fine\n\tindented';
    expect(visible(text)).toBe(text);
  });
});

describe('oneLine', () => {
  it('never returns a line break: each run of breaks is ⏎, tabs are spaces', () => {
    expect(oneLine('first  \r\n\n  second\rthird\u2028fourth\tend')).toBe('first ⏎ second ⏎ third ⏎ fourth end');
    expect(oneLine('\nleading and trailing\n\n')).toBe('leading and trailing');
    expect(oneLine('a\u0085b')).toBe('a⟨U+0085⟩b');
  });

  it('a fake second line stays on the first', () => {
    const shown = oneLine('title\n12:00:00 T-2 verified\u001b]0;x\u0007');
    expect(shown).not.toMatch(/[\n\r]/);
    expect(shown).toBe('title ⏎ 12:00:00 T-2 verified␛]0;x␇');
  });
});

describe('bounded work on hostile text', () => {
  it('is linear: a megabyte of escapes, spaces and unterminated sequences', () => {
    const hostile = [
      '\u001b['.repeat(50_000),
      '\u001b]'.repeat(50_000),
      ` ${' '.repeat(200_000)}\n`.repeat(2),
      '\u009b1;'.repeat(50_000),
      '\u202e'.repeat(50_000),
    ];
    for (const text of hostile) {
      expect(visible(text)).not.toMatch(UNSAFE);
      expect(oneLine(text)).not.toMatch(/[\n\r]|[\u0000-\u001f]/);
    }
  });
});

describe('JSON', () => {
  it('escapes C1, DEL and bidi controls as \\u…, keeps the data', () => {
    const value = { reason: 'a\u009b2J\u0085\u202eb\u007f\u001b]0;x\u0007\u2028' };
    const json = jsonText(value, 2);
    expect(json).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2028]/);
    expect(json).toContain('\\u009b');
    expect(json).toContain('\\u202e');
    expect(JSON.parse(json)).toEqual(value);
    expect(escapeJson('"\u2066"')).toBe('"\\u2066"');
  });
});
