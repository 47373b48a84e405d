import * as assert from "assert";
import * as os from "os";
import * as path from "path";
import {
  SERVER_SETTINGS,
  resolveServerPath,
  serverEnvironment,
  serverNotFoundMessage,
  settingsChange,
  tetherSettings,
} from "../src/settings";

function reader(values: Record<string, unknown>): (key: string) => unknown {
  return (key) => values[key];
}

describe("settings → initializationOptions", () => {
  it("passes the settings the user set, in wire spelling", () => {
    const settings = tetherSettings(
      reader({
        provider: "openai",
        model: "gpt-x",
        baseUrl: "http://127.0.0.1:11434/v1",
        autoApprove: ["edit_file"],
        maxSteps: 12,
        serverPath: "/x",
      }),
    );
    assert.deepStrictEqual(settings, {
      provider: "openai",
      model: "gpt-x",
      baseUrl: "http://127.0.0.1:11434/v1",
      autoApprove: ["edit_file"],
      maxSteps: 12,
    });
  });

  it("leaves out unset, empty and mistyped values so the server's own defaults apply", () => {
    const settings = tetherSettings(
      reader({
        provider: null,
        model: "  ",
        baseUrl: 5,
        autoApprove: ["bash", 3],
        maxSteps: 2.5,
        script: "",
      }),
    );
    assert.deepStrictEqual(settings, {});
    assert.deepStrictEqual(tetherSettings(reader({ maxSteps: 0 })), {});
  });

  it("a change names every server setting: null for those unset, so a removed one stops applying", () => {
    const change = settingsChange(reader({ provider: "scripted", script: "", model: undefined }));
    assert.deepStrictEqual(Object.keys(change).sort(), [...SERVER_SETTINGS].sort());
    assert.strictEqual(change.provider, "scripted");
    for (const key of SERVER_SETTINGS.filter((k) => k !== "provider")) {
      assert.strictEqual(change[key], null, key);
    }
  });

  it("passes the sandbox choice and the diagnostics waits; leaves them out when unset or out of range", () => {
    assert.deepStrictEqual(
      tetherSettings(reader({ sandbox: "auto", diagnosticsSettleMs: 0, diagnosticsMaxWaitMs: 5000 })),
      { sandbox: "auto", diagnosticsSettleMs: 0, diagnosticsMaxWaitMs: 5000 },
    );
    assert.deepStrictEqual(tetherSettings(reader({ sandbox: "off" })), { sandbox: "off" });
    assert.deepStrictEqual(
      tetherSettings(reader({ sandbox: "", diagnosticsSettleMs: null, diagnosticsMaxWaitMs: 60_001 })),
      {},
    );
    assert.deepStrictEqual(tetherSettings(reader({ sandbox: "docker", diagnosticsSettleMs: 1.5 })), {});
  });

  it("trims text and drops duplicate tools", () => {
    const settings = tetherSettings(
      reader({ script: " demo.json ", autoApprove: ["bash", "bash", "edit_file"] }),
    );
    assert.deepStrictEqual(settings, { script: "demo.json", autoApprove: ["bash", "edit_file"] });
  });
});

describe("server environment", () => {
  it("adds stored keys over the inherited ones and keeps the rest", () => {
    const env = serverEnvironment(
      { PATH: "/bin", OPENAI_API_KEY: "from-env", ANTHROPIC_API_KEY: "a-env" },
      { openai: "stored" },
    );
    assert.deepStrictEqual(env, { PATH: "/bin", OPENAI_API_KEY: "stored", ANTHROPIC_API_KEY: "a-env" });
  });
});

describe("resolveServerPath", () => {
  const lookup = (executables: string[], PATH = "/usr/bin:/opt/tether/bin") => ({
    env: { PATH },
    platform: "linux" as NodeJS.Platform,
    isExecutable: (file: string) => executables.includes(file),
  });

  it("uses the configured path: absolute, ~, relative to the workspace, or a bare name", () => {
    const none = lookup([]);
    assert.strictEqual(resolveServerPath("/opt/t/tether", ["/ws"], none), "/opt/t/tether");
    assert.strictEqual(
      resolveServerPath("~/bin/tether", ["/ws"], none),
      path.join(os.homedir(), "bin/tether"),
    );
    assert.strictEqual(
      resolveServerPath(".venv/bin/tether", ["/ws", "/other"], none),
      "/ws/.venv/bin/tether",
    );
    assert.strictEqual(resolveServerPath("tether-dev", ["/ws"], none), "tether-dev");
  });

  it("finds tether on PATH first, then in a trusted workspace's .venv", () => {
    assert.strictEqual(
      resolveServerPath("", ["/ws"], lookup(["/opt/tether/bin/tether", "/ws/.venv/bin/tether"]), true),
      "/opt/tether/bin/tether",
    );
    assert.strictEqual(
      resolveServerPath("", ["/a", "/ws"], lookup(["/ws/.venv/bin/tether"]), true),
      "/ws/.venv/bin/tether",
    );
    assert.strictEqual(resolveServerPath("  ", ["/ws"], lookup([]), true), undefined);
  });

  it("never runs a workspace's own .venv/bin/tether unless the workspace is trusted", () => {
    assert.strictEqual(resolveServerPath("", ["/ws"], lookup(["/ws/.venv/bin/tether"])), undefined);
    assert.strictEqual(resolveServerPath("", ["/ws"], lookup(["/ws/.venv/bin/tether"]), false), undefined);
  });
});

describe("where to set tether.serverPath", () => {
  it("says User settings in a local window", () => {
    assert.match(
      serverNotFoundMessage(undefined),
      /Install Tether, or set tether\.serverPath in your User settings\.$/,
    );
  });

  it("says the Remote settings in a remote window, where User settings do not apply", () => {
    const message = serverNotFoundMessage("ssh-remote");
    assert.match(
      message,
      /in the Remote settings of this ssh-remote window \(Preferences: Open Remote Settings\)/,
    );
    assert.match(message, /User settings do not apply to it here/);
  });
});
