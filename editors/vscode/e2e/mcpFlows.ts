// An MCP server's tool in the real VS Code (issue 26): the user names the tests' notes server
// in their config.toml and restarts the server, as a user does; a prompt in the panel makes
// the model call `mcp__notes__echo`; the panel's card asks with the server, the tool and the
// JSON arguments, shown as is (no command box to change: the server refuses a changed call);
// Allow calls the server once; the tool card and the transcript name it "notes · echo". The
// config is removed and the server restarted again: the MCP server ends with it.
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { panelFrame, visible } from "./panelFlows";
import { serverLog } from "./reviewFlows";
import { Workbench, transcript, waitFor } from "./workbench";

/** The notes server's process ids, as it records them in `marks` when it starts. */
function startedPids(marks: string): number[] {
  return fs
    .readdirSync(marks)
    .filter((name) => name.startsWith("started-"))
    .map((name) => Number(fs.readFileSync(path.join(marks, name), "utf8")));
}

function alive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0] !== "Z";
  } catch {
    return false;
  }
}

/** "Tether: Restart Server", waiting until the new server answered `initialize`. */
async function restartServer(bench: Workbench, userData: string): Promise<void> {
  const initialized = (): number =>
    (serverLog(userData).match(/Received response 'initialize/g) ?? []).length;
  const before = initialized();
  await bench.command("Tether: Restart Server");
  await waitFor("the restarted server to answer initialize", () => initialized() > before);
}

/** Runs the MCP flow; the names of the checks that passed (the first failure throws). */
export async function mcpFlows(
  bench: Workbench,
  root: string,
  userData: string,
  server: { python: string; script: string },
): Promise<string[]> {
  const config = path.join(path.dirname(root), "config", "tether", "config.toml");
  const marks = path.join(path.dirname(root), "mcp-marks");
  fs.mkdirSync(marks, { recursive: true });
  fs.mkdirSync(path.dirname(config), { recursive: true });
  fs.writeFileSync(
    config,
    [
      "[mcpServers.notes]",
      `command = ${JSON.stringify(server.python)}`,
      `args = [${JSON.stringify(server.script)}]`,
      `env = { NOTES_MARKS = ${JSON.stringify(marks)} }`,
      "startupTimeoutSeconds = 90",
      "",
    ].join("\n"),
  );
  await restartServer(bench, userData);
  fs.writeFileSync(
    path.join(root, "flow.json"),
    JSON.stringify({
      turns: [
        { toolCalls: [{ name: "mcp__notes__echo", arguments: { text: "hello from VS Code" } }] },
        { text: "The notes server said hello." },
      ],
    }),
  );
  const panel = panelFrame(bench);
  await bench.command("Tether: Open Agent Panel");
  const prompt = panel.locator("#prompt");
  await visible(prompt);
  const before = (transcript(userData).match(/^■ /gm) ?? []).length;
  await prompt.click();
  await prompt.fill("say hello through notes");
  await prompt.press("Enter");

  const card = panel.locator("section.approval", { hasText: "MCP notes: echo" });
  await visible(card);
  await visible(card.locator("pre.call", { hasText: 'notes › echo {"text": "hello from VS Code"}' }));
  assert.strictEqual(
    await card.locator("textarea.command").count(),
    0,
    "the MCP call was offered for editing",
  );
  await visible(card.locator(".cwd", { hasText: "in MCP server 'notes'" }));
  assert.deepStrictEqual(
    (await card.locator("button.always-allow").allTextContents()).map((t) => t.trim()),
    ["Always allow every call of this tool"],
  );
  assert.deepStrictEqual(
    fs.readdirSync(marks).filter((name) => name.startsWith("called-")),
    [],
  );
  await bench.screenshot("panel-mcp-approval");
  await card.locator("button", { hasText: /^Allow$/ }).click();
  await waitFor("the run to finish", () => (transcript(userData).match(/^■ /gm) ?? []).length > before);
  assert.strictEqual(fs.readFileSync(path.join(marks, "called-echo"), "utf8"), "hello from VS Code");
  const run = panel.locator("article.run").last();
  const tool = run.locator("details.tool[data-status=ok]", {
    hasText: 'notes · echo {"text":"hello from VS Code"}',
  });
  await visible(tool);
  await tool.locator("summary").click();
  await visible(tool.locator("pre.tool-output", { hasText: "echo: hello from VS Code" }));
  await visible(run.locator(".answer", { hasText: "The notes server said hello." }));
  const shown = transcript(userData);
  assert.match(shown, /→ notes · echo \{"text":"hello from VS Code"\}/);
  assert.match(shown, /✓ notes · echo/);
  assert.ok(!shown.includes("mcp__notes__echo"), "the transcript showed the model's name for the tool");
  await bench.screenshot("panel-mcp-called");
  const passed = [
    "mcp: the notes server from the user's config.toml, after Restart Server: the panel's card asks with server, tool and JSON arguments (no command box), Allow calls it once, the card and transcript say 'notes · echo'",
  ];

  // Gone with the server: without the config, a restart leaves no MCP server running.
  const pids = startedPids(marks);
  assert.strictEqual(pids.length, 1, `the notes server started ${pids.length} times`);
  fs.rmSync(config);
  await restartServer(bench, userData);
  await waitFor("the notes server to end with its Tether server", () => !alive(pids[0]));
  passed.push("mcp: the MCP server ends with the Tether server that started it (Restart Server)");
  return passed;
}
