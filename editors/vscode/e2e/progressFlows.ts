// A command that runs, in the agent panel of the real VS Code: once allowed, its card's badge
// says "running · ⠹ 3 s · <the last line it printed>" and its output so far is in the card;
// its result replaces both. The command waits on a FIFO the flow opens only after the badge
// showed a second gone by: nothing waits on a clock.
import * as assert from "assert";
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { panelFrame, visible } from "./panelFlows";
import { Workbench, transcript, waitFor } from "./workbench";

const COMMAND = "echo compiling part one; read word < gate; echo finished $word";
const RUNNING = /^running · [⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] [1-9]\d* s · compiling part one$/;

/** Writes `go` to the FIFO if the command reads it now (never blocks). */
function opened(gate: string): boolean {
  let fd: number;
  try {
    fd = fs.openSync(gate, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENXIO") {
      return false; // nothing reads it yet
    }
    throw error;
  }
  try {
    fs.writeSync(fd, "go\n");
  } finally {
    fs.closeSync(fd);
  }
  return true;
}

/** Runs the flow; the names of those that passed (the first failure throws). */
export async function progressFlows(bench: Workbench, root: string, userData: string): Promise<string[]> {
  const gate = path.join(root, "gate");
  execFileSync("mkfifo", [gate], { timeout: 10_000 });
  fs.writeFileSync(
    path.join(root, "flow.json"),
    JSON.stringify({
      turns: [{ toolCalls: [{ name: "bash", arguments: { command: COMMAND } }] }, { text: "Built." }],
    }),
  );
  const panel = panelFrame(bench);
  const prompt = panel.locator("#prompt");
  const lastRun = () => panel.locator("article.run").last();
  const finished = (): number => (transcript(userData).match(/^■ /gm) ?? []).length;
  await bench.command("Tether: Open Agent Panel");
  await visible(prompt);
  const before = finished();
  await prompt.click();
  await prompt.fill("build it");
  await prompt.press("Enter");
  const asked = panel.locator("section.approval", { hasText: "Run echo compiling part one" });
  const card = lastRun().locator("details.tool", { hasText: "$ echo compiling part one" });
  const running = card.locator(".badge", { hasText: RUNNING });
  // Asked, unless a rule an earlier flow left allows it.
  await waitFor(
    "the command to be asked or to run",
    async () => (await asked.count()) + (await running.count()) > 0,
  );
  if ((await asked.count()) > 0) {
    await asked.locator("button", { hasText: /^Allow$/ }).click();
  }
  try {
    await visible(running);
    await card.locator("summary").click(); // opened: the output so far
    await visible(card.locator(".tool-output", { hasText: "compiling part one" }));
    await bench.screenshot("progress-running");
  } finally {
    await waitFor("the command to read its FIFO", () => opened(gate));
  }
  await waitFor("the run to finish", () => finished() > before);
  await visible(card.locator(".badge", { hasText: /^done$/ }));
  await visible(card.locator(".tool-output", { hasText: "finished go" }));
  assert.strictEqual(await running.count(), 0);
  await bench.screenshot("progress-done");
  fs.rmSync(gate);
  return [
    "progress: an allowed command's card says it runs (the seconds so far, its last line) with its output so far, until its result replaces both",
  ];
}
