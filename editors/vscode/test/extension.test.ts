import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { activate, deactivate } from "../src/extension";
import * as vscode from "./fakeVscode";

interface Manifest {
  main: string;
  activationEvents: string[];
  contributes: {
    commands: Array<{ command: string; title: string; icon?: string }>;
    menus: { "editor/title": Array<{ command: string; when: string }> };
    configuration: { properties: Record<string, unknown> };
  };
}

const MANIFEST = JSON.parse(
  fs.readFileSync(path.resolve(__dirname, "../../package.json"), "utf8"),
) as Manifest;

describe("activate / deactivate (fake VS Code)", () => {
  let subscriptions: Array<{ dispose(): unknown }>;
  const savedPath = process.env.PATH;

  before(() => {
    vscode.reset();
    process.env.PATH = ""; // no `tether` on PATH and no workspace: the server is not found
    subscriptions = [];
    const secrets = {
      get: async () => undefined,
      store: async () => undefined,
      delete: async () => undefined,
    };
    activate({ subscriptions, secrets } as unknown as Parameters<typeof activate>[0]);
  });

  after(async () => {
    process.env.PATH = savedPath;
    await deactivate();
    for (const subscription of subscriptions) {
      subscription.dispose();
    }
  });

  it("registers exactly the commands package.json contributes, each with an activation event", () => {
    const contributed = MANIFEST.contributes.commands.map((c) => c.command).sort();
    assert.deepStrictEqual([...vscode.commands.registered.keys()].sort(), contributed);
    const activating = MANIFEST.activationEvents
      .map((e) => e.replace("onCommand:", ""))
      .filter((e) => !e.startsWith("onView:"))
      .sort();
    assert.deepStrictEqual(
      activating,
      contributed.filter((c) => !c.startsWith("tether.approval.")),
    );
  });

  it("puts the approval buttons in the editor title only while an approval is pending", () => {
    assert.deepStrictEqual(
      MANIFEST.contributes.menus["editor/title"].map((m) => [m.command, m.when]),
      [
        ["tether.approval.allow", "tether.approvalPending"],
        ["tether.approval.allowAlways", "tether.approvalPending"],
        ["tether.approval.deny", "tether.approvalPending"],
        ["tether.approval.reviewInFile", "tether.approvalPending && resourceScheme == tether-proposal"],
      ],
    );
  });

  it("binds keys to accept / reject / next / previous change while a change is under review in the file", () => {
    const bindings = (MANIFEST.contributes as unknown as { keybindings: Array<Record<string, string>> })
      .keybindings;
    assert.deepStrictEqual(
      bindings.map((b) => [b.command, b.key, b.when]),
      [
        ["tether.approval.acceptHunk", "alt+y", "tether.reviewInFile && editorTextFocus"],
        ["tether.approval.rejectHunk", "alt+n", "tether.reviewInFile && editorTextFocus"],
        ["tether.approval.nextChange", "alt+f5", "tether.reviewInFile && editorTextFocus"],
        ["tether.approval.previousChange", "shift+alt+f5", "tether.reviewInFile && editorTextFocus"],
      ],
    );
    for (const binding of bindings) {
      assert.ok(vscode.commands.registered.has(binding.command), binding.command);
    }
  });

  it("labels the approval buttons with words, not icons (an ✕ among the diff editor's icons reads as close)", () => {
    const approval = MANIFEST.contributes.commands.filter((c) => c.command.startsWith("tether.approval."));
    assert.deepStrictEqual(
      approval.map((c) => [c.command, c.title, c.icon]),
      [
        ["tether.approval.allow", "Allow", undefined],
        ["tether.approval.allowAlways", "Allow Always", undefined],
        ["tether.approval.deny", "Deny", undefined],
        ["tether.approval.pick", "Allow or Deny the Pending Edit…", undefined],
        ["tether.approval.reviewInFile", "Review in File", undefined],
        ["tether.approval.acceptHunk", "Accept Change Under Review", undefined],
        ["tether.approval.rejectHunk", "Reject Change Under Review", undefined],
        ["tether.approval.undoHunk", "Undo Choice", undefined],
        ["tether.approval.acceptAll", "Accept All Changes", undefined],
        ["tether.approval.rejectAll", "Reject All Changes", undefined],
        ["tether.approval.openDiff", "Open Diff", undefined],
        ["tether.approval.nextChange", "Next Change Under Review", undefined],
        ["tether.approval.previousChange", "Previous Change Under Review", undefined],
        ["tether.approval.acceptBlock", "Accept", undefined],
        ["tether.approval.rejectBlock", "Reject", undefined],
        ["tether.approval.undoBlock", "Undo", undefined],
      ],
    );
  });

  it("puts Accept / Reject (pending) or Undo (accepted) on the title of inline review's added-lines blocks only", () => {
    const menus = MANIFEST.contributes.menus as Record<string, Array<{ command: string; when: string }>>;
    const block = "commentController == tether-review && commentThread";
    assert.deepStrictEqual(
      menus["comments/commentThread/title"].map((m) => [m.command, m.when]),
      [
        ["tether.approval.acceptBlock", `${block} == pending`],
        ["tether.approval.rejectBlock", `${block} == pending`],
        ["tether.approval.undoBlock", `${block} == accepted`],
      ],
    );
    const palette = menus.commandPalette.filter((m) => m.command.endsWith("Block"));
    assert.deepStrictEqual(
      palette.map((m) => m.when),
      ["false", "false", "false"],
    );
  });

  it("keeps autoApprove and baseUrl out of a workspace's reach (User settings only)", () => {
    const properties = MANIFEST.contributes.configuration.properties as Record<string, { scope?: string }>;
    assert.strictEqual(properties["tether.autoApprove"].scope, "application");
    assert.strictEqual(properties["tether.baseUrl"].scope, "application");
    // A sandbox runs commands unasked: a cloned repository must not be able to turn it on.
    assert.strictEqual(properties["tether.sandbox"].scope, "application");
  });

  it("makes tether.serverPath a machine setting a workspace cannot override, and says where to set it remotely", () => {
    const serverPath = MANIFEST.contributes.configuration.properties["tether.serverPath"] as {
      scope: string;
      markdownDescription: string;
    };
    assert.strictEqual(serverPath.scope, "machine");
    assert.match(serverPath.markdownDescription, /Remote\*\* settings/);
  });

  it("declares the settings the extension reads, and no API key setting", () => {
    assert.deepStrictEqual(Object.keys(MANIFEST.contributes.configuration.properties).sort(), [
      "tether.autoApprove",
      "tether.baseUrl",
      "tether.diagnosticsMaxWaitMs",
      "tether.diagnosticsSettleMs",
      "tether.maxSteps",
      "tether.model",
      "tether.provider",
      "tether.reviewEdits",
      "tether.sandbox",
      "tether.script",
      "tether.serverPath",
    ]);
    assert.strictEqual(MANIFEST.main, "./dist/extension.js");
  });

  it("registers the proposal file system and tells the user when no server is found", async () => {
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepStrictEqual(
      vscode.calls.find(([name]) => name === "registerFileSystemProvider"),
      ["registerFileSystemProvider", ["tether-proposal"]],
    );
    const [error] = vscode.calls.filter(([name]) => name === "showErrorMessage");
    assert.ok(error, "no error shown");
    assert.match(String(error[1][0]), /^Tether: the Tether server was not found/);
    assert.strictEqual(error[1][1], "Open Settings");
  });
});
