import * as assert from "assert";
import type { ClientCapabilities, ServerCapabilities } from "vscode-languageserver-protocol";
import { TetherCapabilitiesFeature } from "../src/capabilities";

describe("TetherCapabilitiesFeature", () => {
  it("declares approvals, events, saveDocuments, diagnostics, code, ask and changeSets beside other experimental capabilities", () => {
    const capabilities: ClientCapabilities = { experimental: { other: 1 }, workspace: { applyEdit: true } };
    new TetherCapabilitiesFeature().fillClientCapabilities(capabilities);
    assert.deepStrictEqual(capabilities, {
      experimental: {
        other: 1,
        tether: {
          approvals: true,
          events: true,
          saveDocuments: true,
          diagnostics: true,
          code: true,
          ask: true,
          changeSets: true,
        },
      },
      workspace: { applyEdit: true },
    });
    assert.deepStrictEqual(new TetherCapabilitiesFeature().getState(), { kind: "static" });
  });

  it("creates experimental when the client had none", () => {
    const capabilities: ClientCapabilities = {};
    new TetherCapabilitiesFeature().fillClientCapabilities(capabilities);
    assert.deepStrictEqual(capabilities.experimental, {
      tether: {
        approvals: true,
        events: true,
        saveDocuments: true,
        diagnostics: true,
        code: true,
        ask: true,
        changeSets: true,
      },
    });
  });

  it("keeps the server's tether.run / tether.cancel from becoming VS Code commands", () => {
    const server: ServerCapabilities = {
      textDocumentSync: 2,
      executeCommandProvider: { commands: ["tether.run", "tether.cancel"] },
    };
    new TetherCapabilitiesFeature().preInitialize(server);
    assert.deepStrictEqual(server, { textDocumentSync: 2 });
  });
});
