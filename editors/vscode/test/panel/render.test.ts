import * as assert from "assert";
import { contentSecurityPolicy, panelHtml } from "../../src/panel/html";
import { renderMarkdown } from "../../src/panel/markdown";
import { parseFromView } from "../../src/panel/messages";

describe("panel: Markdown of the answer", () => {
  it("renders what models write: headings, lists, code, emphasis, links", () => {
    const html = renderMarkdown(
      "# Plan\nChange **one** line in `app.py`:\n\n- keep *tests*\n- run them\n\n```python\nx = a < b\n```\nSee [docs](https://example.org/a?b=1&c=2).",
    );
    assert.strictEqual(
      html,
      "<h3>Plan</h3><p>Change <strong>one</strong> line in <code>app.py</code>:</p>" +
        "<ul><li>keep <em>tests</em></li><li>run them</li></ul>" +
        '<pre data-lang="python"><code>x = a &lt; b</code></pre>' +
        '<p>See <a href="https://example.org/a?b=1&amp;c=2" title="https://example.org/a?b=1&amp;c=2">docs</a>.</p>',
    );
  });

  it("shows raw HTML as text and makes no link of a javascript: or data: target", () => {
    const html = renderMarkdown(
      '<img src=x onerror="alert(1)"> <script>alert(2)</script>\n[click](javascript:alert(3)) [d](data:text/html,x) `<b>`',
    );
    assert.ok(!/<(img|script|b)[\s>]/.test(html), html);
    assert.ok(!html.includes("<a "), html);
    assert.match(html, /&lt;img src=x onerror=&quot;alert\(1\)&quot;&gt;/);
    assert.match(html, /<code>&lt;b&gt;<\/code>/);
  });

  it("renders a table as a table, its cells' markup escaped and aligned by class", () => {
    const html = renderMarkdown(
      "Results:\n\n| test | time |  note |\n|:---|---:|:---:|\n| `a` | 1.5 s | **ok** |\n| <b> | 2 s |\n\nDone.",
    );
    assert.strictEqual(
      html,
      "<p>Results:</p>" +
        '<table><thead><tr><th class="left">test</th><th class="right">time</th><th class="center">note</th></tr></thead>' +
        '<tbody><tr><td class="left"><code>a</code></td><td class="right">1.5 s</td><td class="center"><strong>ok</strong></td></tr>' +
        '<tr><td class="left">&lt;b&gt;</td><td class="right">2 s</td><td class="center"></td></tr></tbody></table>' +
        "<p>Done.</p>",
    );
    // Pipes that are no table (no separator row under the first) stay text.
    assert.strictEqual(renderMarkdown("a | b\nc | d"), "<p>a | b<br>c | d</p>");
    // A pipe inside a code span or escaped is part of the cell.
    assert.match(renderMarkdown("| x |\n|---|\n| `a|b` \\| c |"), /<td><code>a\|b<\/code> \| c<\/td>/);
  });

  it("shows a code block still streaming (no closing fence yet)", () => {
    assert.strictEqual(renderMarkdown("```\nline 1"), "<pre><code>line 1</code></pre>");
  });
});

describe("panel: page and messages", () => {
  it("has a strict CSP: nothing by default, scripts only with the nonce, nothing remote", () => {
    const csp = contentSecurityPolicy("vscode-webview://abc", "N0nce");
    assert.match(csp, /^default-src 'none'; /);
    assert.match(csp, /script-src 'nonce-N0nce'(;|$)/);
    assert.ok(!/https?:|unsafe-inline|unsafe-eval|\*/.test(csp), csp);
    const html = panelHtml({
      cspSource: "vscode-webview://abc",
      nonce: "N0nce",
      scriptUri: "s.js",
      styleUri: "p.css",
    });
    assert.match(html, /<script nonce="N0nce" src="s.js"><\/script>/);
    assert.strictEqual((html.match(/<script/g) ?? []).length, 1); // no inline script
    assert.ok(!/ style=/.test(html));
  });

  it("accepts only well-formed messages from the webview", () => {
    assert.deepStrictEqual(parseFromView({ type: "run", prompt: "fix it" }), {
      type: "run",
      prompt: "fix it",
    });
    assert.deepStrictEqual(
      parseFromView({
        type: "approve",
        callId: "c",
        answer: { choice: "allow-always", rule: { pattern: "ls", scope: "project" } },
      }),
      {
        type: "approve",
        callId: "c",
        answer: { choice: "allow-always", rule: { pattern: "ls", scope: "project" } },
      },
    );
    for (const bad of [
      null,
      "run",
      { type: "run" },
      { type: "approve", callId: "c", answer: { choice: "yes" } },
      {
        type: "approve",
        callId: "c",
        answer: { choice: "allow-always", rule: { pattern: "ls", scope: "builtin" } },
      },
      { type: "revokeRule", rule: { tool: "bash", pattern: "ls", decision: "maybe" } },
      { type: "pickSession", sessionId: 5 },
      { type: "eval", code: "x" },
    ]) {
      assert.strictEqual(parseFromView(bad), undefined, JSON.stringify(bad));
    }
  });
});
