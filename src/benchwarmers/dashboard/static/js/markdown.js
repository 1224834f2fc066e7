// A small markdown subset rendered as DOM nodes: headings, paragraphs, emphasis, code spans and
// fenced blocks, lists, block quotes, tables, rules, and links to http(s) addresses only.
// Every character of the source ends up in a text node or a checked href: whatever a model
// wrote (<script>, <img onerror>, javascript: links), it is shown, never run.

import { h } from "./dom.js";

const FENCE = /^\s*(`{3,}|~{3,})\s*([\w+#.-]*)\s*$/;
const HEADING = /^(#{1,6})\s+(.*?)\s*#*\s*$/;
const RULE = /^\s*([-*_])(\s*\1){2,}\s*$/;
const QUOTE = /^\s*>\s?/;
const BULLET = /^\s*[-*+]\s+/;
const ORDERED = /^\s*(\d{1,9})[.)]\s+/;
const TABLE_RULE = /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/;
const BLANK = /^\s*$/;

export function safeHref(raw) {
  try {
    const url = new URL(raw);
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
  } catch {
    return null;
  }
}

function isTable(lines, i) {
  return lines[i].includes("|") && i + 1 < lines.length && TABLE_RULE.test(lines[i + 1]);
}

function startsBlock(lines, i) {
  const line = lines[i];
  return (
    FENCE.test(line) || HEADING.test(line) || RULE.test(line) || QUOTE.test(line) ||
    BULLET.test(line) || ORDERED.test(line) || isTable(lines, i)
  );
}

function cells(line) {
  let row = line.trim();
  if (row.startsWith("|")) row = row.slice(1);
  if (row.endsWith("|") && !row.endsWith("\\|")) row = row.slice(0, -1);
  return row.split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, "|"));
}

export function renderMarkdown(source) {
  const root = document.createDocumentFragment();
  const lines = String(source).replace(/\r\n?/g, "\n").split("\n");
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (BLANK.test(line)) {
      i++;
      continue;
    }
    const fence = line.match(FENCE);
    if (fence) {
      const body = [];
      i++;
      while (i < lines.length && !lines[i].trim().startsWith(fence[1])) body.push(lines[i++]);
      i++;
      const code = h("code", fence[2] ? { class: `language-${fence[2]}` } : {}, body.join("\n"));
      root.append(h("pre", {}, code));
      continue;
    }
    const heading = line.match(HEADING);
    if (heading) {
      // One section of a dialog: its headings start below the dialog's own.
      root.append(inline(h(`h${Math.min(6, heading[1].length + 2)}`), heading[2]));
      i++;
      continue;
    }
    if (RULE.test(line)) {
      root.append(h("hr"));
      i++;
      continue;
    }
    if (QUOTE.test(line)) {
      const quoted = [];
      while (i < lines.length && QUOTE.test(lines[i])) quoted.push(lines[i++].replace(QUOTE, ""));
      root.append(h("blockquote", {}, renderMarkdown(quoted.join("\n"))));
      continue;
    }
    if (isTable(lines, i)) {
      const head = h("tr", {}, cells(line).map((c) => inline(h("th", { scope: "col" }), c)));
      const body = h("tbody");
      i += 2;
      while (i < lines.length && lines[i].includes("|") && !BLANK.test(lines[i])) {
        body.append(h("tr", {}, cells(lines[i++]).map((c) => inline(h("td"), c))));
      }
      root.append(h("table", {}, h("thead", {}, head), body));
      continue;
    }
    if (BULLET.test(line) || ORDERED.test(line)) {
      const ordered = !BULLET.test(line);
      const marker = ordered ? ORDERED : BULLET;
      const start = ordered ? Number(line.match(ORDERED)[1]) : 1;
      const list = h(ordered ? "ol" : "ul", ordered && start !== 1 ? { start } : {});
      while (i < lines.length && marker.test(lines[i])) {
        let item = lines[i++].replace(marker, "");
        while (i < lines.length && /^\s{2,}\S/.test(lines[i]) && !BULLET.test(lines[i]) && !ORDERED.test(lines[i])) {
          item += `\n${lines[i++].trim()}`;
        }
        list.append(inline(h("li"), item));
      }
      root.append(list);
      continue;
    }
    const paragraph = [];
    while (i < lines.length && !BLANK.test(lines[i]) && !(paragraph.length && startsBlock(lines, i))) {
      paragraph.push(lines[i++]);
    }
    root.append(inline(h("p"), paragraph.join("\n")));
  }
  return root;
}

// Code spans, strong, emphasis, [links](http://...), bare http(s) URLs, line breaks.
const INLINE =
  /(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)|\*\*(?=\S)([\s\S]+?)\*\*|(?<!\w)__(?=\S)([\s\S]+?)__(?!\w)|\*(?=[^\s*])([\s\S]*?[^\s*])\*|(?<!\w)_(?=[^\s_])([\s\S]*?[^\s_])_(?!\w)|\[([^\]\n]+)\]\(\s*<?([^()\s<>]+)>?(?:\s+"[^"\n]*")?\s*\)|(https?:\/\/[^\s<>()]*[^\s<>().,;:!?'"\]])|(\n)/g;

function inline(el, text) {
  let last = 0;
  for (const m of text.matchAll(INLINE)) {
    if (m.index > last) el.append(text.slice(last, m.index));
    last = m.index + m[0].length;
    if (m[1]) el.append(h("code", {}, m[2]));
    else if (m[3] !== undefined || m[4] !== undefined) el.append(inline(h("strong"), m[3] ?? m[4]));
    else if (m[5] !== undefined || m[6] !== undefined) el.append(inline(h("em"), m[5] ?? m[6]));
    else if (m[7] !== undefined) {
      const href = safeHref(m[8]);
      el.append(href ? inline(link(href), m[7]) : m[0]);
    } else if (m[9] !== undefined) {
      const href = safeHref(m[9]);
      el.append(href ? link(href, m[9]) : m[9]);
    } else el.append(h("br"));
  }
  if (last < text.length) el.append(text.slice(last));
  return el;
}

function link(href, label) {
  return h("a", { href, rel: "noopener noreferrer nofollow", target: "_blank", referrerpolicy: "no-referrer" }, label ?? []);
}
