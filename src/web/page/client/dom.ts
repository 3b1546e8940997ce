/**
 * The page's one way of putting text into the document, as browser JavaScript. Invariant: every string that came from the fleet (titles, reasons, agent output, diffs,
 * check output, reports) reaches the DOM through `textContent` or `createTextNode`, after {@link
 * DOM_JS}'s `clean` has dropped colour and cursor sequences and shown every other control character as a
 * picture, as the terminal sanitiser does; a link is only ever made from an `http:` or `https:` URL.
 */
export const DOM_JS = String.raw`
const CSI = /(?:\u001b\[|\u009b)[0-?]*[ -\/]*[@-~]/g;
const STRING_INTRO = /\u001b([\]PX^_])|([\u0090\u0098\u009d\u009e\u009f])/g;
const C1_INTRO = { '\u0090': 'P', '\u0098': 'X', '\u009d': ']', '\u009e': '^', '\u009f': '_' };
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;

function picture(ch) {
  const c = ch.charCodeAt(0);
  if (c < 0x20) return String.fromCharCode(0x2400 + c);
  if (c === 0x7f) return '\u2421';
  return '\u27e8U+' + c.toString(16).toUpperCase().padStart(4, '0') + '\u27e9';
}

/** Text from the fleet, safe to show: CSI dropped, string sequences shown (␛]8;;…), every control pictured. */
export function clean(text) {
  if (text === null || text === undefined) return '';
  return String(text)
    .replace(/\r\n?/g, '\n')
    .replace(CSI, '')
    .replace(STRING_INTRO, (_m, seven, eight) => '\u241b' + (seven || C1_INTRO[eight]))
    .replace(UNSAFE, picture);
}

/** One line of it: line breaks become ⏎. */
export function line(text) {
  return clean(text).replace(/\s*\n\s*/g, ' \u23ce ').replace(/\t/g, ' ');
}

/** An element with a class and (cleaned) text. */
export function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = clean(text);
  return node;
}

/** Replaces a node's children. */
export function fill(node, ...children) {
  node.replaceChildren(...children.filter((c) => c !== null && c !== undefined));
  return node;
}

/** Sets a node's text only when it changed, so an update that changes nothing costs no layout. */
export function setText(node, text) {
  if (node.textContent !== text) node.textContent = text;
}

/** The URL when it is an absolute http: or https: URL, else null: nothing else ever becomes an href. */
export function safeHttpUrl(text) {
  if (typeof text !== 'string') return null;
  let url;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
}

/** A link for an http(s) URL (opened without referrer or opener), or plain text for anything else. */
export function link(text, label) {
  const href = safeHttpUrl(text);
  if (href === null) return el('span', 'url', label ?? text);
  const a = el('a', 'url', label ?? text);
  a.href = href;
  a.target = '_blank';
  a.rel = 'noopener noreferrer';
  return a;
}
`;
