/**
 * The morning report as a page: a small Markdown reader for what the
 * report writes — headings, paragraphs, lists, fenced code, tables, `code` and **bold** — that builds
 * elements and text nodes only. No HTML in the Markdown is ever parsed as HTML, and no link is made from it:
 * a report quotes agents, and an agent's Markdown link shows as its words.
 */
export const MARKDOWN_JS = String.raw`
import { clean, el } from './dom.js';

/** Inline text: code spans and bold, as elements holding text. */
function inline(node, text) {
  const re = /(\u0060[^\u0060]+\u0060|\*\*[^*]+\*\*)/g;
  let at = 0;
  let m;
  while ((m = re.exec(text)) !== null) {
    if (m.index > at) node.append(document.createTextNode(text.slice(at, m.index)));
    const token = m[0];
    node.append(token.startsWith('**') ? el('strong', null, token.slice(2, -2)) : el('code', null, token.slice(1, -1)));
    at = m.index + token.length;
  }
  if (at < text.length) node.append(document.createTextNode(text.slice(at)));
  return node;
}

function cells(rowText) {
  return rowText.replace(/^\s*\|/, '').replace(/\|\s*$/, '').split('|').map((c) => c.trim());
}

/** Markdown to a fragment of elements. */
export function renderMarkdown(markdown) {
  const out = document.createDocumentFragment();
  const lines = clean(markdown).split('\n');
  let i = 0;
  let list = null;
  let para = null;
  const endBlocks = () => {
    list = null;
    para = null;
  };
  while (i < lines.length) {
    const l = lines[i];
    const fence = /^(\u0060{3,}|~{3,})/.exec(l);
    if (fence) {
      endBlocks();
      const body = [];
      i++;
      while (i < lines.length && !lines[i].startsWith(fence[1])) body.push(lines[i++]);
      i++;
      const pre = el('pre', 'code');
      pre.append(el('code', null, body.join('\n')));
      out.append(pre);
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(l);
    if (heading) {
      endBlocks();
      out.append(inline(el('h' + Math.min(6, heading[1].length + 1)), heading[2]));
      i++;
      continue;
    }
    if (/^\s*\|.*\|\s*$/.test(l) && i + 1 < lines.length && /^\s*\|?\s*:?-{2,}/.test(lines[i + 1])) {
      endBlocks();
      const table = el('table', 'md-table');
      const head = el('tr');
      for (const c of cells(l)) head.append(inline(el('th'), c));
      table.append(el('thead'));
      table.firstChild.append(head);
      const body = el('tbody');
      i += 2;
      while (i < lines.length && /^\s*\|.*\|\s*$/.test(lines[i])) {
        const tr = el('tr');
        for (const c of cells(lines[i])) tr.append(inline(el('td'), c));
        body.append(tr);
        i++;
      }
      table.append(body);
      out.append(table);
      continue;
    }
    const item = /^\s*(?:[-*+]|\d+[.)])\s+(.*)$/.exec(l);
    if (item) {
      para = null;
      if (list === null) {
        list = el(/^\s*\d/.test(l) ? 'ol' : 'ul');
        out.append(list);
      }
      list.append(inline(el('li'), item[1]));
      i++;
      continue;
    }
    if (l.trim() === '') {
      endBlocks();
      i++;
      continue;
    }
    if (/^\s*>/.test(l)) {
      endBlocks();
      out.append(inline(el('blockquote'), l.replace(/^\s*>\s?/, '')));
      i++;
      continue;
    }
    list = null;
    if (para === null) {
      para = el('p');
      out.append(para);
    } else para.append(document.createTextNode(' '));
    inline(para, l);
    i++;
  }
  return out;
}
`;
