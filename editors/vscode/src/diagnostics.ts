// `agent/diagnostics`: the problems VS Code's language servers and linters report, as LSP
// Diagnostics (what the server adds to an edit's result and its `diagnostics` tool reads).
// VS Code ranges count UTF-16 code units, which is the position encoding it negotiates.
import * as vscode from "vscode";
import type { AgentDiagnosticsParams, AgentDiagnosticsResult, Diagnostic, FileDiagnostics } from "./protocol";

/** The part of a vscode.Diagnostic that goes on the wire. */
export interface DiagnosticLike {
  readonly range: {
    readonly start: { readonly line: number; readonly character: number };
    readonly end: { readonly line: number; readonly character: number };
  };
  readonly message: string;
  /** vscode.DiagnosticSeverity: Error 0, Warning 1, Information 2, Hint 3. */
  readonly severity: number;
  readonly source?: string;
  readonly code?: string | number | { readonly value: string | number; readonly target: unknown };
}

/** What `vscode.languages.getDiagnostics` offers, both forms. */
export interface DiagnosticsSource {
  forUri(uri: string): readonly DiagnosticLike[];
  all(): ReadonlyArray<[string, readonly DiagnosticLike[]]>;
}

/** Documents whose problems the server can use (it only knows files). */
const SCHEMES = new Set(["file"]);

/** A VS Code diagnostic as an LSP one: severity 0..3 → 1..4, a code's value without its link. */
export function toLspDiagnostic(diagnostic: DiagnosticLike): Diagnostic {
  const { start, end } = diagnostic.range;
  const lsp: Diagnostic = {
    range: {
      start: { line: start.line, character: start.character },
      end: { line: end.line, character: end.character },
    },
    severity: diagnostic.severity + 1,
    message: diagnostic.message,
  };
  const code = typeof diagnostic.code === "object" ? diagnostic.code.value : diagnostic.code;
  if (code !== undefined && code !== "") {
    lsp.code = code;
  }
  if (diagnostic.source) {
    lsp.source = diagnostic.source;
  }
  return lsp;
}

/**
 * The answer: for each URI asked (as the server sent it) its diagnostics, empty when there
 * are none; without `uris`, every file that has some.
 */
export function diagnosticsAnswer(
  params: AgentDiagnosticsParams,
  source: DiagnosticsSource,
): AgentDiagnosticsResult {
  let items: FileDiagnostics[];
  if (params.uris !== undefined && params.uris !== null) {
    items = params.uris.map((uri) => ({ uri, diagnostics: source.forUri(uri).map(toLspDiagnostic) }));
  } else {
    items = source
      .all()
      .filter(([uri, diagnostics]) => diagnostics.length > 0 && SCHEMES.has(uri.slice(0, uri.indexOf(":"))))
      .map(([uri, diagnostics]) => ({ uri, diagnostics: diagnostics.map(toLspDiagnostic) }));
  }
  return { items };
}

/** VS Code's diagnostics (every language server's and linter's, in the Problems view). */
export const vscodeDiagnostics: DiagnosticsSource = {
  // Parsed: the server and VS Code may escape the same path differently.
  forUri: (uri) => vscode.languages.getDiagnostics(vscode.Uri.parse(uri)),
  all: () => vscode.languages.getDiagnostics().map(([uri, diagnostics]) => [uri.toString(), diagnostics]),
};

/** The handler of `agent/diagnostics`. */
export async function answerDiagnostics(params: AgentDiagnosticsParams): Promise<AgentDiagnosticsResult> {
  return diagnosticsAnswer(params ?? {}, vscodeDiagnostics);
}
