// Declares `capabilities.experimental.tether` through the LanguageClient's feature API.
// Only types come from vscode-languageclient, so this loads (and is tested) without VS Code.
import type { FeatureState, StaticFeature } from "vscode-languageclient";
import type { ClientCapabilities, ServerCapabilities } from "vscode-languageserver-protocol";
import { CLIENT_CAPABILITIES } from "./protocolClient";

/**
 * `experimental.tether = {approvals, events, saveDocuments, diagnostics, code, ask,
 * changeSets}`: this extension answers all of them (diagnostics from
 * `vscode.languages.getDiagnostics`, code from `vscode.execute…Provider`, ask with a quick
 * pick or an input box) and shows a change of several files (a rename's approval) whole, in
 * the multi-file diff editor. It also hides the
 * server's `executeCommandProvider` (`tether.run`, `tether.cancel`, for plain LSP clients)
 * from the LanguageClient, which would otherwise register them as VS Code commands and
 * collide with this extension's `tether.cancel`.
 */
export class TetherCapabilitiesFeature implements StaticFeature {
  fillClientCapabilities(capabilities: ClientCapabilities): void {
    const experimental =
      typeof capabilities.experimental === "object" && capabilities.experimental !== null
        ? (capabilities.experimental as Record<string, unknown>)
        : {};
    capabilities.experimental = { ...experimental, tether: { ...CLIENT_CAPABILITIES } };
  }

  preInitialize(capabilities: ServerCapabilities): void {
    delete capabilities.executeCommandProvider;
  }

  initialize(): void {
    // Nothing to set up: the handlers are registered by TetherProtocol.
  }

  getState(): FeatureState {
    return { kind: "static" };
  }

  clear(): void {
    // Nothing to clear.
  }
}
