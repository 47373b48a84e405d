// A small `workspace/applyEdit` for the integration test: applies CreateFile and
// TextDocumentEdit (UTF-16 positions, which are JavaScript string indices) to the disk.
import * as fs from "fs";
import { fileURLToPath } from "url";
import type {
  ApplyWorkspaceEditParams,
  ApplyWorkspaceEditResult,
  Position,
  TextEdit,
} from "vscode-languageserver-protocol";

export function offsetAt(text: string, position: Position): number {
  let offset = 0;
  for (let line = 0; line < position.line; line += 1) {
    const newline = text.indexOf("\n", offset);
    if (newline === -1) {
      return text.length;
    }
    offset = newline + 1;
  }
  const lineEnd = text.indexOf("\n", offset);
  return Math.min(offset + position.character, lineEnd === -1 ? text.length : lineEnd);
}

export function applyTextEdits(text: string, edits: readonly TextEdit[]): string {
  const ordered = [...edits].sort(
    (a, b) => b.range.start.line - a.range.start.line || b.range.start.character - a.range.start.character,
  );
  let result = text;
  for (const edit of ordered) {
    result =
      result.slice(0, offsetAt(result, edit.range.start)) +
      edit.newText +
      result.slice(offsetAt(result, edit.range.end));
  }
  return result;
}

export function applyWorkspaceEdit(params: ApplyWorkspaceEditParams): ApplyWorkspaceEditResult {
  for (const change of params.edit.documentChanges ?? []) {
    if ("kind" in change) {
      if (change.kind !== "create") {
        return { applied: false, failureReason: `unsupported resource operation ${change.kind}` };
      }
      const file = fileURLToPath(change.uri);
      if (!fs.existsSync(file) || change.options?.overwrite) {
        fs.writeFileSync(file, "");
      }
      continue;
    }
    const file = fileURLToPath(change.textDocument.uri);
    const edits = change.edits.filter((edit): edit is TextEdit => "range" in edit && "newText" in edit);
    fs.writeFileSync(file, applyTextEdits(fs.readFileSync(file, "utf8"), edits));
  }
  return { applied: true };
}
