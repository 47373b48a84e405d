// Markdown of the assistant's answer as HTML for the panel, safe by construction: every
// character of the source is escaped first and only the tags made here are emitted, so
// raw HTML in the answer shows as text; links keep only http(s) and mailto targets.
// Covers what models write: headings, paragraphs, lists, quotes, fenced and inline code,
// emphasis, links, rules, tables. No `vscode` import: tested directly.

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

const SAFE_LINK = /^(https?:|mailto:)/i;

/** Inline markup of one escaped line: code spans first, so nothing inside them is markup. */
function inline(escaped: string): string {
  const parts = escaped.split(/(`+[^`]*?`+)/);
  return parts
    .map((part, index) => {
      if (index % 2 === 1) {
        return `<code>${part.replace(/^`+|`+$/g, "")}</code>`;
      }
      return part
        .replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (whole, label: string, href: string) => {
          // href is escaped already (no quote can close the attribute).
          return SAFE_LINK.test(href) ? `<a href="${href}" title="${href}">${label}</a>` : whole;
        })
        .replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>")
        .replace(/__([^_]+)__/g, "<strong>$1</strong>")
        .replace(/(^|[^*\w])\*([^*\s][^*]*?)\*(?!\w)/g, "$1<em>$2</em>")
        .replace(/(^|[^_\w])_([^_\s][^_]*?)_(?!\w)/g, "$1<em>$2</em>");
    })
    .join("");
}

type Align = "left" | "right" | "center" | undefined;

/** A table row's cells: split at each `|` outside code spans and not escaped (`\|`). */
function cells(line: string): string[] {
  let text = line.trim();
  if (text.startsWith("|")) {
    text = text.slice(1);
  }
  if (text.endsWith("|") && !text.endsWith("\\|")) {
    text = text.slice(0, -1);
  }
  const out: string[] = [];
  let cell = "";
  let code = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (c === "\\" && text[i + 1] === "|") {
      cell += "|";
      i += 1;
    } else if (c === "`") {
      code = !code;
      cell += c;
    } else if (c === "|" && !code) {
      out.push(cell.trim());
      cell = "";
    } else {
      cell += c;
    }
  }
  out.push(cell.trim());
  return out;
}

/** The line under a table's header: `|---|:---:|`, each cell's alignment. */
function separator(line: string): Align[] | undefined {
  if (!line.includes("-") || !/^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/.test(line)) {
    return undefined;
  }
  return cells(line).map((cell) => {
    const left = cell.startsWith(":");
    const right = cell.endsWith(":");
    return left && right ? "center" : right ? "right" : left ? "left" : undefined;
  });
}

function table(header: string[], aligns: Align[], rows: string[][]): string {
  const cell = (tag: string, text: string, index: number): string => {
    const align = aligns[index];
    return `<${tag}${align ? ` class="${align}"` : ""}>${inline(escapeHtml(text))}</${tag}>`;
  };
  const row = (tag: string, values: string[]): string =>
    `<tr>${header.map((_, index) => cell(tag, values[index] ?? "", index)).join("")}</tr>`;
  const body = rows.length > 0 ? `<tbody>${rows.map((values) => row("td", values)).join("")}</tbody>` : "";
  return `<table><thead>${row("th", header)}</thead>${body}</table>`;
}

interface ListState {
  readonly tag: "ul" | "ol";
  readonly items: string[];
}

/** The whole answer as HTML (a complete or still streaming text). */
export function renderMarkdown(source: string): string {
  const lines = source.replace(/\r\n?/g, "\n").split("\n");
  const out: string[] = [];
  let paragraph: string[] = [];
  let list: ListState | undefined;
  let quote: string[] = [];
  let fence: { marker: string; lang: string; lines: string[] } | undefined;

  const flushParagraph = (): void => {
    if (paragraph.length > 0) {
      out.push(`<p>${paragraph.map((l) => inline(escapeHtml(l))).join("<br>")}</p>`);
      paragraph = [];
    }
  };
  const flushList = (): void => {
    if (list !== undefined) {
      out.push(
        `<${list.tag}>${list.items.map((i) => `<li>${inline(escapeHtml(i))}</li>`).join("")}</${list.tag}>`,
      );
      list = undefined;
    }
  };
  const flushQuote = (): void => {
    if (quote.length > 0) {
      out.push(`<blockquote>${renderMarkdown(quote.join("\n"))}</blockquote>`);
      quote = [];
    }
  };
  const flushAll = (): void => {
    flushParagraph();
    flushList();
    flushQuote();
  };

  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index];
    if (fence !== undefined) {
      if (line.trim().startsWith(fence.marker)) {
        out.push(codeBlock(fence.lines, fence.lang));
        fence = undefined;
      } else {
        fence.lines.push(line);
      }
      continue;
    }
    const opening = /^\s*(```+|~~~+)\s*([\w+.#-]*)/.exec(line);
    if (opening !== null) {
      flushAll();
      fence = { marker: opening[1], lang: opening[2], lines: [] };
      continue;
    }
    if (line.trim() === "") {
      flushAll();
      continue;
    }
    const quoted = /^\s*>\s?(.*)$/.exec(line);
    if (quoted !== null) {
      flushParagraph();
      flushList();
      quote.push(quoted[1]);
      continue;
    }
    flushQuote();
    const heading = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading !== null) {
      flushParagraph();
      flushList();
      const level = Math.min(heading[1].length + 2, 6); // h3…h6: the panel is narrow
      out.push(`<h${level}>${inline(escapeHtml(heading[2]))}</h${level}>`);
      continue;
    }
    if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) {
      flushAll();
      out.push("<hr>");
      continue;
    }
    const item = /^\s*(?:([-*+])|(\d+)[.)])\s+(.*)$/.exec(line);
    if (item !== null) {
      flushParagraph();
      const tag = item[1] !== undefined ? "ul" : "ol";
      if (list?.tag !== tag) {
        flushList();
        list = { tag, items: [] };
      }
      list.items.push(item[3]);
      continue;
    }
    if (list !== undefined && /^\s+\S/.test(line)) {
      list.items[list.items.length - 1] += ` ${line.trim()}`; // a wrapped item continues
      continue;
    }
    const aligns = line.includes("|") && index + 1 < lines.length ? separator(lines[index + 1]) : undefined;
    if (aligns !== undefined) {
      flushAll();
      const header = cells(line);
      const rows: string[][] = [];
      index += 2;
      while (index < lines.length && lines[index].includes("|") && lines[index].trim() !== "") {
        rows.push(cells(lines[index]));
        index += 1;
      }
      index -= 1; // the loop's step: the line after the table is read next
      out.push(table(header, aligns, rows));
      continue;
    }
    flushList();
    paragraph.push(line);
  }
  if (fence !== undefined) {
    out.push(codeBlock(fence.lines, fence.lang)); // still streaming: show what came
  }
  flushAll();
  return out.join("");
}

function codeBlock(lines: string[], lang: string): string {
  const label = lang === "" ? "" : ` data-lang="${escapeHtml(lang)}"`;
  return `<pre${label}><code>${escapeHtml(lines.join("\n"))}</code></pre>`;
}
