// The panel webview's page: a strict Content-Security-Policy (nothing remote, scripts only
// with this page's nonce, styles only from the extension), the script and stylesheet from
// media/. No `vscode` import: tested directly.
import { randomBytes } from "crypto";

export function makeNonce(): string {
  return randomBytes(18)
    .toString("base64")
    .replace(/[^A-Za-z0-9]/g, "");
}

/** The Content-Security-Policy of the page (`cspSource`: the webview's own resource origin). */
export function contentSecurityPolicy(cspSource: string, nonce: string): string {
  return [
    "default-src 'none'",
    `style-src ${cspSource}`,
    `script-src 'nonce-${nonce}'`,
    `img-src ${cspSource} data:`,
    `font-src ${cspSource}`,
  ].join("; ");
}

export function panelHtml(options: {
  cspSource: string;
  nonce: string;
  scriptUri: string;
  styleUri: string;
}): string {
  const { cspSource, nonce, scriptUri, styleUri } = options;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${contentSecurityPolicy(cspSource, nonce)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${styleUri}">
<title>Tether</title>
</head>
<body>
<main id="app">
  <nav aria-label="Sessions and rules">
    <details id="sessions-box">
      <summary>Sessions</summary>
      <div class="row"><button type="button" id="refresh-sessions" class="secondary">Refresh</button></div>
      <ul id="sessions"></ul>
    </details>
    <details id="rules-box">
      <summary>Rules</summary>
      <div class="row"><button type="button" id="refresh-rules" class="secondary">Refresh</button></div>
      <ul id="rules"></ul>
    </details>
  </nav>
  <p id="empty" class="muted">A new conversation. Earlier ones are under <b>Sessions</b>, one click away.</p>
  <section id="runs" aria-label="Runs" aria-live="polite"></section>
  <section id="approvals" aria-label="Approvals waiting for you" aria-live="polite"></section>
  <p id="notice" role="alert" hidden></p>
  <form id="composer" aria-label="Prompt">
    <div id="session-line"><span id="session-label">New session</span>
      <button type="button" id="new-session" class="link" hidden>New session</button></div>
    <div id="context-chips" class="chips" role="group" aria-label="Context sent with the prompt"></div>
    <textarea id="prompt" rows="3" placeholder="Ask Tether… (Enter sends, Shift+Enter new line, @ names a file, / a command)" aria-label="Prompt for Tether" aria-autocomplete="list" aria-controls="mentions"></textarea>
    <ul id="mentions" role="listbox" aria-label="Files" hidden></ul>
    <div class="row">
      <button type="submit" id="send">Send</button>
      <button type="button" id="cancel" class="secondary" hidden>Cancel</button>
      <button type="button" id="undo" class="secondary" hidden>Undo this run</button>
    </div>
  </form>
</main>
<script nonce="${nonce}" src="${scriptUri}"></script>
</body>
</html>`;
}
