// `agent/code`: the model's code tools (definition, references, hover, symbols, a rename's
// edit) answered by VS Code's own language features (`vscode.execute…Provider`), so that
// Tether does not start a second language server next to the user's extensions. VS Code
// positions count UTF-16 code units, the encoding it negotiates with the server. When no
// provider answers for the file (an empty answer), the reply is `unavailable` and Tether
// asks its own servers.
import * as vscode from "vscode";
import type { AgentCodeParams, AgentCodeResult, CodeLocation, CodeSymbol, Range } from "./protocol";

/** `vscode.commands.executeCommand`, or a test's stand-in. */
export type Execute = (command: string, ...args: unknown[]) => Promise<unknown>;

/** Who answered, as the tool result names it (VS Code does not say which extension). */
export const SERVER = "VS Code";

interface RangeLike {
  readonly start: { readonly line: number; readonly character: number };
  readonly end: { readonly line: number; readonly character: number };
}

function range(value: RangeLike): Range {
  return {
    start: { line: value.start.line, character: value.start.character },
    end: { line: value.end.line, character: value.end.character },
  };
}

function isRange(value: unknown): value is RangeLike {
  const r = value as RangeLike | undefined;
  return typeof r?.start?.line === "number" && typeof r?.end?.line === "number";
}

/** A `Location` or `LocationLink` as `{uri, range}` (a link by its target selection). */
function location(item: unknown): CodeLocation | undefined {
  const value = item as {
    uri?: unknown;
    range?: unknown;
    targetUri?: unknown;
    targetRange?: unknown;
    targetSelectionRange?: unknown;
  };
  const uri = value?.targetUri ?? value?.uri;
  const where = value?.targetSelectionRange ?? value?.targetRange ?? value?.range;
  if (uri === undefined || uri === null || !isRange(where)) {
    return undefined;
  }
  return { uri: String(uri), range: range(where) };
}

function list(value: unknown): unknown[] {
  if (Array.isArray(value)) {
    return value;
  }
  return value === undefined || value === null ? [] : [value];
}

/** The text of `Hover[]`: each content (MarkdownString or MarkedString) joined. */
function hoverText(hovers: unknown): string {
  const parts: string[] = [];
  for (const hover of list(hovers)) {
    for (const content of list((hover as { contents?: unknown })?.contents)) {
      const text = typeof content === "string" ? content : (content as { value?: unknown })?.value;
      if (typeof text === "string" && text !== "") {
        parts.push(text);
      }
    }
  }
  return parts.join("\n\n");
}

/** `DocumentSymbol[]` (nested; by its selection range) or `SymbolInformation[]`. VS Code's
 * `SymbolKind` counts from 0, LSP's from 1. */
function symbols(result: unknown, uri: string | undefined): CodeSymbol[] {
  const out: CodeSymbol[] = [];
  const walk = (item: unknown, depth: number, container: string | undefined): void => {
    const symbol = item as {
      name?: unknown;
      kind?: unknown;
      selectionRange?: unknown;
      location?: unknown;
      containerName?: unknown;
      children?: unknown;
    };
    if (typeof symbol?.name !== "string") {
      return;
    }
    const where = isRange(symbol.selectionRange)
      ? uri === undefined
        ? undefined
        : { uri, range: range(symbol.selectionRange) }
      : location(symbol.location);
    if (where === undefined) {
      return;
    }
    const kind =
      typeof symbol.kind === "number" && symbol.kind >= 0 && symbol.kind <= 25 ? symbol.kind + 1 : 13;
    const inside =
      typeof symbol.containerName === "string" && symbol.containerName !== ""
        ? symbol.containerName
        : container;
    out.push({
      name: symbol.name,
      kind,
      location: where,
      depth,
      ...(inside !== undefined ? { containerName: inside } : {}),
    });
    for (const child of list(symbol.children)) {
      walk(child, depth + 1, symbol.name);
    }
  };
  for (const item of list(result)) {
    walk(item, 0, undefined);
  }
  return out;
}

/**
 * A rename provider's `WorkspaceEdit` as `{uri: [{range, newText}]}`: its text edits by file
 * (`entries()`). Nothing is applied here: the server proposes the change as one approval.
 */
function renameChanges(edit: unknown): Record<string, Array<{ range: Range; newText: string }>> {
  const entries = (edit as { entries?: () => unknown } | undefined)?.entries?.();
  const changes: Record<string, Array<{ range: Range; newText: string }>> = {};
  for (const entry of list(entries)) {
    const [file, edits] = Array.isArray(entry) ? entry : [];
    const found = list(edits).flatMap((item) => {
      const textEdit = item as { range?: unknown; newText?: unknown };
      return isRange(textEdit?.range) && typeof textEdit.newText === "string"
        ? [{ range: range(textEdit.range), newText: textEdit.newText }]
        : [];
    });
    if (file !== undefined && file !== null && found.length > 0) {
      const key = String(file);
      changes[key] = [...(changes[key] ?? []), ...found];
    }
  }
  return changes;
}

/** `FileEditType.File` of VS Code's `WorkspaceEdit` entries: a file created, renamed or deleted. */
const FILE_OPERATION = 1;

/**
 * The file a rename provider's edit would also create, rename or delete, in words ("rename
 * greet.rs to salute.rs"), or undefined. VS Code's public `WorkspaceEdit` lists only its text
 * edits (`entries()`, `size`): a module's rename by rust-analyzer, which renames its file,
 * would lose the file's rename and break the build. Its file operations are seen only through
 * `_allEntries()`, the list VS Code's own extension host reads; where that is missing the edit
 * is taken as text edits alone.
 */
function fileOperation(edit: unknown): string | undefined {
  const all = (edit as { _allEntries?: unknown } | undefined)?._allEntries;
  if (typeof all !== "function") {
    return undefined;
  }
  const named = (uri: unknown): string | undefined =>
    uri instanceof vscode.Uri ? vscode.workspace.asRelativePath(uri, false) : undefined;
  for (const entry of list(all.call(edit))) {
    const item = entry as { _type?: unknown; from?: unknown; to?: unknown } | undefined;
    if (item?._type !== FILE_OPERATION) {
      continue;
    }
    const [from, to] = [named(item.from), named(item.to)];
    if (from !== undefined && to !== undefined) {
      return `rename ${from} to ${to}`;
    }
    return to !== undefined ? `create ${to}` : `delete ${from ?? "a file"}`;
  }
  return undefined;
}

/** The answer to `agent/code` from VS Code's providers (through `execute`). */
export async function codeAnswer(params: AgentCodeParams, execute: Execute): Promise<AgentCodeResult> {
  const uri = typeof params.uri === "string" ? vscode.Uri.parse(params.uri) : undefined;
  const at = params.position
    ? new vscode.Position(params.position.line, params.position.character)
    : undefined;
  const none = (what: string): AgentCodeResult => ({
    unavailable: `no language feature in VS Code answered ${what}`,
  });
  switch (params.request) {
    case "definition":
    case "references": {
      if (uri === undefined || at === undefined) {
        return none(params.request);
      }
      const command =
        params.request === "definition"
          ? "vscode.executeDefinitionProvider"
          : "vscode.executeReferenceProvider";
      const found = list(await execute(command, uri, at))
        .map(location)
        .filter((l): l is CodeLocation => l !== undefined);
      return found.length === 0 ? none(params.request) : { server: SERVER, locations: found };
    }
    case "hover": {
      if (uri === undefined || at === undefined) {
        return none("hover");
      }
      const text = hoverText(await execute("vscode.executeHoverProvider", uri, at));
      return text === "" ? none("hover") : { server: SERVER, hover: text };
    }
    case "documentSymbols": {
      if (uri === undefined) {
        return none("documentSymbols");
      }
      const result = await execute("vscode.executeDocumentSymbolProvider", uri);
      if (result === undefined || result === null) {
        return none("documentSymbols");
      }
      return { server: SERVER, symbols: symbols(result, params.uri ?? undefined) };
    }
    case "workspaceSymbols": {
      const result = await execute("vscode.executeWorkspaceSymbolProvider", params.query ?? "");
      const found = symbols(result, undefined);
      return found.length === 0 ? none("workspaceSymbols") : { server: SERVER, symbols: found };
    }
    case "rename": {
      if (uri === undefined || at === undefined || !params.newName) {
        return none("rename");
      }
      const edit = await execute("vscode.executeDocumentRenameProvider", uri, at, params.newName);
      const operation = fileOperation(edit);
      if (operation !== undefined) {
        return {
          unavailable: `the rename would also ${operation}, which Tether does not apply; nothing was changed`,
        };
      }
      const changes = renameChanges(edit);
      return Object.keys(changes).length === 0 ? none("rename") : { server: SERVER, changes };
    }
    default:
      return { unavailable: `VS Code does not answer ${String(params.request)}` };
  }
}

/** The handler of `agent/code`. */
export async function answerCode(params: AgentCodeParams): Promise<AgentCodeResult> {
  try {
    return await codeAnswer(params, (command, ...args) =>
      Promise.resolve(vscode.commands.executeCommand(command, ...args)),
    );
  } catch (error) {
    return {
      unavailable: `VS Code failed to answer: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
}
