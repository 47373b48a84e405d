// The fixes of userErrors.ts carried out, and an explained error shown as a notification
// whose button is its fix.
import * as vscode from "vscode";
import { Explained, Fix, fixLabel } from "./userErrors";

/** Opens the setting, asks for the API key, opens the file or shows the log. */
export async function performFix(fix: Fix): Promise<void> {
  switch (fix.kind) {
    case "setting": {
      // A machine setting (tether.serverPath) of a remote window is in its Remote settings.
      const remote = fix.key === "serverPath" && Boolean(vscode.env.remoteName);
      await vscode.commands.executeCommand(
        remote ? "workbench.action.openRemoteSettings" : "workbench.action.openSettings",
        `tether.${fix.key}`,
      );
      return;
    }
    case "apiKey":
      await vscode.commands.executeCommand("tether.setApiKey");
      return;
    case "file":
      await vscode.commands.executeCommand("vscode.open", vscode.Uri.file(fix.path));
      return;
    case "log":
      await vscode.commands.executeCommand("tether.showLog");
      return;
  }
}

/** An error notification saying `explained`, its fix as the button. */
export async function showExplained(explained: Explained): Promise<void> {
  const actions = explained.fix !== undefined ? [fixLabel(explained.fix)] : [];
  const picked = await vscode.window.showErrorMessage(`Tether: ${explained.message}`, ...actions);
  if (picked !== undefined && explained.fix !== undefined) {
    await performFix(explained.fix);
  }
}
