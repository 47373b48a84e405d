import * as assert from "assert";
import { PassThrough } from "stream";
import { StreamMessageReader, StreamMessageWriter, createMessageConnection } from "vscode-jsonrpc/node";
import { answerDiagnostics, diagnosticsAnswer, toLspDiagnostic } from "../src/diagnostics";
import { CLIENT_CAPABILITIES, TetherProtocol } from "../src/protocolClient";
import * as vscode from "./fakeVscode";

/** A vscode.Diagnostic as VS Code hands it out: severity 0 (Error) .. 3 (Hint). */
function problem(
  line: number,
  severity: number,
  message: string,
  extra: { source?: string; code?: unknown; start?: number; end?: number } = {},
) {
  return {
    range: new vscode.Range(line, extra.start ?? 4, line, extra.end ?? 9),
    severity,
    message,
    ...(extra.source !== undefined ? { source: extra.source } : {}),
    ...(extra.code !== undefined ? { code: extra.code } : {}),
  };
}

const APP = vscode.Uri.parse("file:///work/app/app.py");
const LIB = vscode.Uri.parse("file:///work/app/lib%20dir/lib.py");

describe("agent/diagnostics answered from vscode.languages.getDiagnostics", () => {
  beforeEach(() => {
    vscode.reset();
    vscode.problems.push(
      [
        APP,
        [
          problem(1, 0, 'Operator "+" not supported', {
            source: "Pyright",
            code: { value: "reportOperatorIssue", target: vscode.Uri.parse("https://example.invalid/rule") },
          }),
          problem(2, 1, "unused import", { source: "Ruff", code: 401 }),
          problem(3, 2, "info"),
          problem(4, 3, "a hint", { code: "" }),
        ],
      ],
      [LIB, []],
      [vscode.Uri.parse("git:/work/app/app.py"), [problem(0, 0, "from another scheme")]],
    );
  });

  it("maps severity Error..Hint (0..3) to LSP 1..4 and sends a code's value, not its link", () => {
    const [[, diagnostics]] = vscode.problems;
    assert.deepStrictEqual(
      diagnostics.map((d) => toLspDiagnostic(d as never)),
      [
        {
          range: { start: { line: 1, character: 4 }, end: { line: 1, character: 9 } },
          severity: 1,
          code: "reportOperatorIssue",
          source: "Pyright",
          message: 'Operator "+" not supported',
        },
        {
          range: { start: { line: 2, character: 4 }, end: { line: 2, character: 9 } },
          severity: 2,
          code: 401,
          source: "Ruff",
          message: "unused import",
        },
        {
          range: { start: { line: 3, character: 4 }, end: { line: 3, character: 9 } },
          severity: 3,
          message: "info",
        },
        {
          range: { start: { line: 4, character: 4 }, end: { line: 4, character: 9 } },
          severity: 4,
          message: "a hint",
        },
      ],
    );
  });

  it("answers the URIs asked, as the server spelled them, empty lists included", async () => {
    const asked = [
      "file:///work/app/app.py",
      "file:///work/app/lib%20dir/lib.py",
      "file:///work/app/none.py",
    ];
    const { items } = await answerDiagnostics({ uris: asked });
    assert.deepStrictEqual(
      items?.map((item) => [item.uri, item.diagnostics?.map((d) => d.severity)]),
      [
        ["file:///work/app/app.py", [1, 2, 3, 4]],
        ["file:///work/app/lib%20dir/lib.py", []],
        ["file:///work/app/none.py", []],
      ],
    );
  });

  it("answers every file with problems when no URI is given (no other schemes, no empty files)", async () => {
    const { items } = await answerDiagnostics({});
    assert.deepStrictEqual(
      items?.map((item) => [item.uri, item.diagnostics?.length]),
      [["file:///work/app/app.py", 4]],
    );
    assert.deepStrictEqual(await answerDiagnostics({ uris: null }), await answerDiagnostics({}));
    assert.deepStrictEqual(diagnosticsAnswer({ uris: [] }, { forUri: () => [], all: () => [] }), {
      items: [],
    });
  });

  it("keeps UTF-16 columns as VS Code counts them (LSP's default encoding)", () => {
    // "x = '🌍' + 1": the astral character is two UTF-16 units, so `+` is at 9.
    const lsp = toLspDiagnostic(problem(0, 0, "bad operand", { start: 9, end: 10 }) as never);
    assert.deepStrictEqual(lsp.range, { start: { line: 0, character: 9 }, end: { line: 0, character: 10 } });
  });
});

describe("agent/diagnostics over the protocol layer", () => {
  it("declares the capability and routes the request to the handler (or answers none without one)", async () => {
    assert.strictEqual(CLIENT_CAPABILITIES.diagnostics, true);
    for (const withHandler of [true, false]) {
      const [up, down] = [new PassThrough(), new PassThrough()];
      const client = createMessageConnection(new StreamMessageReader(down), new StreamMessageWriter(up));
      const server = createMessageConnection(new StreamMessageReader(up), new StreamMessageWriter(down));
      client.listen();
      server.listen();
      const protocol = new TetherProtocol(client, {
        onEvent: () => undefined,
        approve: async () => ({ decision: "deny" }),
        saveDocuments: async () => ({ saved: [] }),
        ...(withHandler
          ? {
              diagnostics: async (params) => ({
                items: (params.uris ?? []).map((uri) => ({
                  uri,
                  diagnostics: [toLspDiagnostic(problem(0, 1, "w") as never)],
                })),
              }),
            }
          : {}),
      });
      const answer = await server.sendRequest("agent/diagnostics", { uris: ["file:///a.py"] });
      assert.deepStrictEqual(
        answer,
        withHandler
          ? {
              items: [
                {
                  uri: "file:///a.py",
                  diagnostics: [
                    {
                      range: { start: { line: 0, character: 4 }, end: { line: 0, character: 9 } },
                      severity: 2,
                      message: "w",
                    },
                  ],
                },
              ],
            }
          : { items: [] },
      );
      protocol.dispose();
      client.dispose();
      server.dispose();
    }
  });
});
