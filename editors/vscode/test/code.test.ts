import * as assert from "assert";
import { PassThrough } from "stream";
import { StreamMessageReader, StreamMessageWriter, createMessageConnection } from "vscode-jsonrpc/node";
import { answerCode, codeAnswer, type Execute } from "../src/code";
import { CLIENT_CAPABILITIES, TetherProtocol } from "../src/protocolClient";
import * as vscode from "./fakeVscode";

const APP = "file:///work/app/app.py";
const LIB = "file:///work/app/lib.py";
const SPAN = { start: { line: 0, character: 4 }, end: { line: 0, character: 9 } };

/** VS Code's providers as `executeCommand` answers them; each call recorded. */
function providers(answers: Record<string, unknown>): { execute: Execute; asked: unknown[][] } {
  const asked: unknown[][] = [];
  const execute: Execute = async (command, ...args) => {
    asked.push([command, ...args]);
    return answers[command];
  };
  return { execute, asked };
}

describe("agent/code answered by VS Code's language features", () => {
  beforeEach(() => vscode.reset());

  it("asks the definition provider at the position and answers a link by its target selection", async () => {
    const { execute, asked } = providers({
      "vscode.executeDefinitionProvider": [
        {
          targetUri: vscode.Uri.parse(LIB),
          targetRange: new vscode.Range(0, 0, 2, 0),
          targetSelectionRange: new vscode.Range(0, 4, 0, 9),
        },
      ],
    });
    const answer = await codeAnswer(
      { request: "definition", uri: APP, position: { line: 2, character: 13 } },
      execute,
    );
    assert.deepStrictEqual(answer, { server: "VS Code", locations: [{ uri: LIB, range: SPAN }] });
    const [[command, uri, position]] = asked;
    assert.strictEqual(command, "vscode.executeDefinitionProvider");
    assert.strictEqual(String(uri), APP);
    assert.deepStrictEqual(position, new vscode.Position(2, 13));
  });

  it("answers references, hover text and a document's nested symbols (kinds from 0 to LSP's from 1)", async () => {
    const { execute } = providers({
      "vscode.executeReferenceProvider": [
        { uri: vscode.Uri.parse(LIB), range: new vscode.Range(0, 4, 0, 9) },
        { uri: vscode.Uri.parse(APP), range: new vscode.Range(2, 13, 2, 18) },
      ],
      "vscode.executeHoverProvider": [
        {
          contents: [new vscode.MarkdownString("```python\ndef greet(name: str) -> str\n```"), "Say hello."],
        },
      ],
      "vscode.executeDocumentSymbolProvider": [
        {
          name: "Greeter",
          kind: 4, // Class
          range: new vscode.Range(0, 0, 3, 0),
          selectionRange: new vscode.Range(0, 6, 0, 13),
          children: [
            {
              name: "greet",
              kind: 5,
              range: new vscode.Range(1, 0, 2, 0),
              selectionRange: new vscode.Range(1, 8, 1, 13),
            },
          ],
        },
      ],
    });
    const at = { line: 2, character: 13 };
    const references = await codeAnswer({ request: "references", uri: APP, position: at }, execute);
    assert.deepStrictEqual(
      references.locations?.map((l) => l.uri),
      [LIB, APP],
    );
    const hover = await codeAnswer({ request: "hover", uri: APP, position: at }, execute);
    assert.deepStrictEqual(hover, {
      server: "VS Code",
      hover: "```python\ndef greet(name: str) -> str\n```\n\nSay hello.",
    });
    const outline = await codeAnswer({ request: "documentSymbols", uri: LIB }, execute);
    assert.deepStrictEqual(outline.symbols, [
      {
        name: "Greeter",
        kind: 5,
        location: { uri: LIB, range: { start: { line: 0, character: 6 }, end: { line: 0, character: 13 } } },
        depth: 0,
      },
      {
        name: "greet",
        kind: 6,
        location: { uri: LIB, range: { start: { line: 1, character: 8 }, end: { line: 1, character: 13 } } },
        depth: 1,
        containerName: "Greeter",
      },
    ]);
  });

  it("answers a rename with the provider's edit of every file, never applying it", async () => {
    // A WorkspaceEdit as VS Code's rename provider returns it: its text edits by file.
    const edit = {
      entries: () => [
        [vscode.Uri.parse(LIB), [new vscode.TextEdit(new vscode.Range(0, 4, 0, 9), "salute")]],
        [
          vscode.Uri.parse(APP),
          [
            new vscode.TextEdit(new vscode.Range(0, 17, 0, 22), "salute"),
            new vscode.TextEdit(new vscode.Range(2, 13, 2, 18), "salute"),
          ],
        ],
      ],
    };
    const { execute, asked } = providers({ "vscode.executeDocumentRenameProvider": edit });
    const answer = await codeAnswer(
      { request: "rename", uri: APP, position: { line: 2, character: 13 }, newName: "salute" },
      execute,
    );
    const span = (line: number, from: number, to: number) => ({
      start: { line, character: from },
      end: { line, character: to },
    });
    assert.deepStrictEqual(answer, {
      server: "VS Code",
      changes: {
        [LIB]: [{ range: SPAN, newText: "salute" }],
        [APP]: [
          { range: span(0, 17, 22), newText: "salute" },
          { range: span(2, 13, 18), newText: "salute" },
        ],
      },
    });
    const [[command, uri, position, newName]] = asked;
    assert.strictEqual(command, "vscode.executeDocumentRenameProvider");
    assert.strictEqual(String(uri), APP);
    assert.deepStrictEqual(position, new vscode.Position(2, 13));
    assert.strictEqual(newName, "salute");
    assert.deepStrictEqual(vscode.calls, []); // nothing applied: the server proposes it
    // A provider that finds nothing to rename: Tether's own servers are asked.
    const none = providers({ "vscode.executeDocumentRenameProvider": { entries: () => [] } });
    const empty = await codeAnswer(
      { request: "rename", uri: APP, position: { line: 2, character: 13 }, newName: "salute" },
      none.execute,
    );
    assert.strictEqual(empty.unavailable, "no language feature in VS Code answered rename");
  });

  it("answers unavailable a rename that would also rename, create or delete a file", async () => {
    // rust-analyzer renames a module's file with it; VS Code's public WorkspaceEdit lists only
    // the text edits (entries()), its extension host every entry (_allEntries()).
    const MAIN = "file:///work/app/main.rs";
    const text = new vscode.TextEdit(new vscode.Range(0, 4, 0, 9), "salute");
    const answered = async (operation: object): Promise<unknown> => {
      const edit = {
        entries: () => [[vscode.Uri.parse(MAIN), [text]]],
        _allEntries: () => [
          { _type: 2, uri: vscode.Uri.parse(MAIN), edit: text },
          { _type: 1, ...operation },
        ],
      };
      const { execute } = providers({ "vscode.executeDocumentRenameProvider": edit });
      return codeAnswer(
        { request: "rename", uri: MAIN, position: { line: 0, character: 4 }, newName: "salute" },
        execute,
      );
    };
    const greet = vscode.Uri.parse("file:///work/app/src/greet.rs");
    const salute = vscode.Uri.parse("file:///work/app/src/salute.rs");
    const unavailable = (what: string) => ({
      unavailable: `the rename would also ${what}, which Tether does not apply; nothing was changed`,
    });
    assert.deepStrictEqual(
      await answered({ from: greet, to: salute }),
      unavailable("rename src/greet.rs to src/salute.rs"),
    );
    assert.deepStrictEqual(await answered({ to: salute }), unavailable("create src/salute.rs"));
    assert.deepStrictEqual(await answered({ from: greet }), unavailable("delete src/greet.rs"));
    assert.deepStrictEqual(vscode.calls, []);
  });

  it("answers a workspace query from SymbolInformation", async () => {
    const { execute, asked } = providers({
      "vscode.executeWorkspaceSymbolProvider": [
        {
          name: "greet",
          kind: 11, // Function
          containerName: "lib",
          location: { uri: vscode.Uri.parse(LIB), range: new vscode.Range(0, 4, 0, 9) },
        },
      ],
    });
    const answer = await codeAnswer({ request: "workspaceSymbols", query: "gre" }, execute);
    assert.deepStrictEqual(answer, {
      server: "VS Code",
      symbols: [
        { name: "greet", kind: 12, location: { uri: LIB, range: SPAN }, depth: 0, containerName: "lib" },
      ],
    });
    assert.deepStrictEqual(asked, [["vscode.executeWorkspaceSymbolProvider", "gre"]]);
  });

  it("is unavailable when no provider answers (a rename too), and when a provider fails", async () => {
    const { execute } = providers({});
    const at = { line: 0, character: 4 };
    for (const request of ["definition", "references", "hover"] as const) {
      const answer = await codeAnswer({ request, uri: APP, position: at }, execute);
      assert.match(answer.unavailable ?? "", /no language feature in VS Code answered/);
    }
    assert.ok((await codeAnswer({ request: "documentSymbols", uri: APP }, execute)).unavailable);
    const rename = await codeAnswer({ request: "rename", uri: APP, position: at, newName: "hi" }, execute);
    assert.strictEqual(rename.unavailable, "no language feature in VS Code answered rename");
    const commands = vscode.commands as { executeCommand: (...args: unknown[]) => Promise<unknown> };
    const original = commands.executeCommand;
    commands.executeCommand = async () => {
      throw new Error("provider crashed");
    };
    try {
      const failed = await answerCode({ request: "definition", uri: APP, position: at });
      assert.strictEqual(failed.unavailable, "VS Code failed to answer: provider crashed");
    } finally {
      commands.executeCommand = original;
    }
  });
});

describe("agent/code over the protocol layer", () => {
  it("declares the capability and routes the request to the handler", async () => {
    assert.strictEqual(CLIENT_CAPABILITIES.code, true);
    const [up, down] = [new PassThrough(), new PassThrough()];
    const client = createMessageConnection(new StreamMessageReader(down), new StreamMessageWriter(up));
    const server = createMessageConnection(new StreamMessageReader(up), new StreamMessageWriter(down));
    client.listen();
    server.listen();
    const protocol = new TetherProtocol(client, {
      onEvent: () => undefined,
      approve: async () => ({ decision: "deny" }),
      saveDocuments: async () => ({ saved: [] }),
      code: async (params) => ({ server: "VS Code", hover: `asked ${params.request}` }),
    });
    const answer = await server.sendRequest("agent/code", {
      request: "hover",
      uri: APP,
      position: SPAN.start,
    });
    assert.deepStrictEqual(answer, { server: "VS Code", hover: "asked hover" });
    protocol.dispose();
    client.dispose();
    server.dispose();
  });
});
